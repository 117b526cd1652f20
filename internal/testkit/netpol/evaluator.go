package netpol

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// namespaceNameLabel is the label the API server sets on every namespace
// to its name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// Pod is one end of a connection that policies may select: its namespace,
// its labels and its IP (the zero Addr when unknown; then no ipBlock
// matches it).
type Pod struct {
	Namespace string
	Labels    map[string]string
	IP        netip.Addr
}

// Peer is the other end of a connection: a pod (PodPeer) or an address
// outside any pod (IPPeer).
type Peer struct {
	pod   *Pod
	addr  netip.Addr
	isPod bool
}

// PodPeer returns the peer that is pod p.
func PodPeer(p Pod) Peer { return Peer{pod: &p, addr: p.IP, isPod: true} }

// IPPeer returns the peer at address ip, outside any pod: a node, a
// machine outside the cluster, a cloud metadata endpoint.
func IPPeer(ip netip.Addr) Peer { return Peer{addr: ip} }

// Evaluator answers whether a set of NetworkPolicies allows a connection.
// It is immutable and safe for concurrent use.
type Evaluator struct {
	policies   []policy
	namespaces map[string]labels.Set
}

// New compiles policies for evaluation. namespaceLabels gives the labels of
// the namespaces selectors may match, by namespace name; a namespace that
// is not listed has only its kubernetes.io/metadata.name label. New fails,
// naming the policy and field, on a selector, CIDR or port the API server
// would refuse, and on a named port (wrapping errors.ErrUnsupported).
func New(policies []networkingv1.NetworkPolicy, namespaceLabels map[string]map[string]string) (*Evaluator, error) {
	e := &Evaluator{namespaces: make(map[string]labels.Set, len(namespaceLabels))}
	for ns, l := range namespaceLabels {
		e.namespaces[ns] = withName(ns, l)
	}
	for _, np := range policies {
		p, err := compilePolicy(np)
		if err != nil {
			return nil, fmt.Errorf("networkpolicy %s/%s: %w", np.Namespace, np.Name, err)
		}
		e.policies = append(e.policies, p)
	}
	return e, nil
}

// Egress reports whether the policies let pod from open a connection to
// peer to on port over proto (TCP when empty). It answers for from's side
// only: a pod destination's ingress policies are Ingress's question.
func (e *Evaluator) Egress(from Pod, to Peer, port int32, proto corev1.Protocol) bool {
	return e.allowed(from, to, port, proto, networkingv1.PolicyTypeEgress)
}

// Ingress reports whether the policies let peer from open a connection to
// pod to on port over proto (TCP when empty). It answers for to's side
// only: a pod source's egress policies are Egress's question.
func (e *Evaluator) Ingress(to Pod, from Peer, port int32, proto corev1.Protocol) bool {
	return e.allowed(to, from, port, proto, networkingv1.PolicyTypeIngress)
}

// allowed applies the API's rule for one direction of pod's traffic: allowed
// when no policy selects pod for dir, else when any rule of any selecting
// policy allows it.
func (e *Evaluator) allowed(pod Pod, other Peer, port int32, proto corev1.Protocol, dir networkingv1.PolicyType) bool {
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	selected := false
	for _, p := range e.policies {
		rules, applies := p.rules(dir)
		if !applies || !p.selects(pod) {
			continue
		}
		selected = true
		for _, r := range rules {
			if r.allows(e, p.namespace, other, port, proto) {
				return true
			}
		}
	}
	return !selected
}

// namespaceLabels returns the labels of namespace ns.
func (e *Evaluator) namespaceLabels(ns string) labels.Set {
	if l, ok := e.namespaces[ns]; ok {
		return l
	}
	return labels.Set{namespaceNameLabel: ns}
}

// withName returns a copy of l with the namespace name label set to ns.
func withName(ns string, l map[string]string) labels.Set {
	out := make(labels.Set, len(l)+1)
	for k, v := range l {
		out[k] = v
	}
	out[namespaceNameLabel] = ns
	return out
}
