package netpol

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// rules returns p's rules for direction dir, and whether p applies in that
// direction at all.
func (p policy) rules(dir networkingv1.PolicyType) ([]rule, bool) {
	if dir == networkingv1.PolicyTypeIngress {
		return p.ingressRules, p.ingress
	}
	return p.egressRules, p.egress
}

// selects reports whether p applies to pod: same namespace, and its
// podSelector matches.
func (p policy) selects(pod Pod) bool {
	return pod.Namespace == p.namespace && p.pods.Matches(labels.Set(pod.Labels))
}

// allows reports whether r, in a policy of namespace ns, allows traffic
// with other on port over proto.
func (r rule) allows(e *Evaluator, ns string, other Peer, port int32, proto corev1.Protocol) bool {
	return r.portMatches(port, proto) && r.peerMatches(e, ns, other)
}

func (r rule) portMatches(port int32, proto corev1.Protocol) bool {
	if len(r.ports) == 0 {
		return true
	}
	for _, p := range r.ports {
		if p.proto == proto && (p.all || p.from <= port && port <= p.to) {
			return true
		}
	}
	return false
}

func (r rule) peerMatches(e *Evaluator, ns string, other Peer) bool {
	if len(r.peers) == 0 {
		return true
	}
	for _, p := range r.peers {
		if p.matches(e, ns, other) {
			return true
		}
	}
	return false
}

// matches reports whether peer entry p of a policy in namespace ns matches
// other: by address for an ipBlock, by namespace and pod labels otherwise.
func (p peer) matches(e *Evaluator, ns string, other Peer) bool {
	if p.block != nil {
		return p.block.contains(other)
	}
	if !other.isPod {
		return false
	}
	pod := other.pod
	if p.namespaces == nil {
		return pod.Namespace == ns && p.pods.Matches(labels.Set(pod.Labels))
	}
	return p.namespaces.Matches(e.namespaceLabels(pod.Namespace)) && p.pods.Matches(labels.Set(pod.Labels))
}

// contains reports whether other's address is inside the block and outside
// its exceptions. An unknown address is in no block.
func (b *ipBlock) contains(other Peer) bool {
	if !other.addr.IsValid() || !b.cidr.Contains(other.addr) {
		return false
	}
	for _, ex := range b.except {
		if ex.Contains(other.addr) {
			return false
		}
	}
	return true
}
