package netpol

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// policy is a NetworkPolicy compiled for evaluation.
type policy struct {
	namespace       string
	pods            labels.Selector
	ingress, egress bool
	ingressRules    []rule
	egressRules     []rule
}

// rule is one ingress or egress rule: nil peers match every peer, nil
// ports every port.
type rule struct {
	peers []peer
	ports []portRange
}

// peer is one entry of a rule's to or from. Exactly one of block and pods
// is set; namespaces nil means the policy's own namespace.
type peer struct {
	block      *ipBlock
	pods       labels.Selector
	namespaces labels.Selector
}

type ipBlock struct {
	cidr   netip.Prefix
	except []netip.Prefix
}

// portRange matches proto on ports from..to; all matches every port.
type portRange struct {
	proto    corev1.Protocol
	all      bool
	from, to int32
}

func compilePolicy(np networkingv1.NetworkPolicy) (policy, error) {
	pods, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		return policy{}, fmt.Errorf("spec.podSelector: %w", err)
	}
	p := policy{namespace: np.Namespace, pods: pods}
	p.ingress, p.egress = policyTypes(np.Spec)
	for i, r := range np.Spec.Ingress {
		c, err := compileRule(fmt.Sprintf("spec.ingress[%d]", i), "from", r.From, r.Ports)
		if err != nil {
			return policy{}, err
		}
		p.ingressRules = append(p.ingressRules, c)
	}
	for i, r := range np.Spec.Egress {
		c, err := compileRule(fmt.Sprintf("spec.egress[%d]", i), "to", r.To, r.Ports)
		if err != nil {
			return policy{}, err
		}
		p.egressRules = append(p.egressRules, c)
	}
	return p, nil
}

// policyTypes returns the directions a policy applies to, defaulted as the
// API server does when policyTypes is empty.
func policyTypes(s networkingv1.NetworkPolicySpec) (ingress, egress bool) {
	if len(s.PolicyTypes) == 0 {
		return true, len(s.Egress) > 0
	}
	return slices.Contains(s.PolicyTypes, networkingv1.PolicyTypeIngress),
		slices.Contains(s.PolicyTypes, networkingv1.PolicyTypeEgress)
}

// compileRule compiles the rule at path, whose peers are in field
// peerField (to or from). Its errors name the field: spec.egress[2].to[0].
func compileRule(path, peerField string, peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort) (rule, error) {
	var r rule
	for i, p := range peers {
		c, err := compilePeer(p)
		if err != nil {
			return rule{}, fmt.Errorf("%s.%s[%d]: %w", path, peerField, i, err)
		}
		r.peers = append(r.peers, c)
	}
	for i, p := range ports {
		c, err := compilePort(p)
		if err != nil {
			return rule{}, fmt.Errorf("%s.ports[%d]: %w", path, i, err)
		}
		r.ports = append(r.ports, c)
	}
	return r, nil
}

func compilePeer(p networkingv1.NetworkPolicyPeer) (peer, error) {
	hasSelector := p.PodSelector != nil || p.NamespaceSelector != nil
	switch {
	case p.IPBlock != nil && hasSelector:
		return peer{}, errors.New("ipBlock may not be combined with a selector")
	case p.IPBlock != nil:
		b, err := compileIPBlock(*p.IPBlock)
		return peer{block: b}, err
	case !hasSelector:
		return peer{}, errors.New("names no podSelector, namespaceSelector or ipBlock")
	}
	c := peer{pods: labels.Everything()}
	var err error
	if p.PodSelector != nil {
		if c.pods, err = metav1.LabelSelectorAsSelector(p.PodSelector); err != nil {
			return peer{}, fmt.Errorf("podSelector: %w", err)
		}
	}
	if p.NamespaceSelector != nil {
		if c.namespaces, err = metav1.LabelSelectorAsSelector(p.NamespaceSelector); err != nil {
			return peer{}, fmt.Errorf("namespaceSelector: %w", err)
		}
	}
	return c, nil
}

// compileIPBlock parses cidr and except. A CIDR with host bits set, which
// the API server refuses today but stored in older versions, is read as its
// network, as those versions did.
func compileIPBlock(b networkingv1.IPBlock) (*ipBlock, error) {
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil {
		return nil, fmt.Errorf("ipBlock.cidr %q: invalid CIDR", b.CIDR)
	}
	out := &ipBlock{cidr: cidr.Masked()}
	for i, s := range b.Except {
		ex, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("ipBlock.except[%d] %q: invalid CIDR", i, s)
		}
		if !out.cidr.Contains(ex.Addr()) || ex.Bits() <= out.cidr.Bits() {
			return nil, fmt.Errorf("ipBlock.except[%d] %q: not a strict subset of cidr %s", i, s, b.CIDR)
		}
		out.except = append(out.except, ex.Masked())
	}
	return out, nil
}

func compilePort(p networkingv1.NetworkPolicyPort) (portRange, error) {
	r := portRange{proto: corev1.ProtocolTCP}
	if p.Protocol != nil {
		r.proto = *p.Protocol
	}
	switch {
	case p.Port == nil && p.EndPort != nil:
		return portRange{}, errors.New("endPort needs a numeric port")
	case p.Port == nil:
		r.all = true
		return r, nil
	case p.Port.Type == intstr.String:
		return portRange{}, fmt.Errorf("named port %q: %w", p.Port.StrVal, errors.ErrUnsupported)
	}
	r.from, r.to = p.Port.IntVal, p.Port.IntVal
	if p.EndPort != nil {
		if *p.EndPort < r.from {
			return portRange{}, fmt.Errorf("endPort %d is below port %d", *p.EndPort, r.from)
		}
		r.to = *p.EndPort
	}
	return r, nil
}
