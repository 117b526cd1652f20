package render

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
)

// namespaceNameLabel is set by Kubernetes on every namespace to its name.
const namespaceNameLabel = "kubernetes.io/metadata.name"

// dnsPort is the cluster DNS port, open to workers over UDP and TCP.
const dnsPort = 53

// Internet blocks: every IPv4 and every IPv6 address.
const (
	anyIPv4 = "0.0.0.0/0"
	anyIPv6 = "::/0"
)

// networkPolicy denies every ingress to the worker's pods and allows the
// egress of the component's posture. Every posture includes the base rules
// (the NATS broker's client port and cluster DNS), and every rule names its
// peers: a rule without peers would allow every destination.
func networkPolicy(c api.Component, cl Cluster, m meta) (*networkingv1.NetworkPolicy, error) {
	egress, err := egressRules(c.Spec.Egress, cl)
	if err != nil {
		return nil, err
	}
	md := c.Metadata
	np := &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: m.objectMeta(nil),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selectorLabels(md.Namespace, md.Name)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Egress:      egress,
		},
	}
	return np, stamp(np, np, m)
}

func egressRules(e api.Egress, cl Cluster) ([]networkingv1.NetworkPolicyEgressRule, error) {
	rules := []networkingv1.NetworkPolicyEgressRule{natsRule(cl.NATS), dnsRule(cl.DNS)}
	switch e.Mode {
	case api.EgressNone, "":
		return rules, nil
	case api.EgressCluster:
		return append(rules, networkingv1.NetworkPolicyEgressRule{
			To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}},
		}), nil
	case api.EgressInternet:
		return append(rules, networkingv1.NetworkPolicyEgressRule{
			To: []networkingv1.NetworkPolicyPeer{ipBlock(anyIPv4, nil), ipBlock(anyIPv6, nil)},
		}), nil
	case api.EgressAllow:
		for i, a := range e.Allow {
			r, err := allowRule(a)
			if err != nil {
				return nil, fmt.Errorf("spec.egress.allow[%d]: %w", i, err)
			}
			rules = append(rules, r)
		}
		return rules, nil
	default:
		return nil, fmt.Errorf("spec.egress: unknown mode %q", e.Mode)
	}
}

// natsRule allows the broker's client port on the broker's pods.
func natsRule(n NATS) networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{
		To:    []networkingv1.NetworkPolicyPeer{podsIn(n.Namespace, n.PodLabels)},
		Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, n.ClientPort)},
	}
}

// dnsRule allows port 53 over UDP and TCP (large answers fall back to TCP)
// on the cluster DNS pods only. Policies apply after a Service's virtual IP
// is translated to a pod, so selecting the DNS pods covers the DNS Service.
func dnsRule(d DNS) networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{podsIn(d.Namespace, d.PodLabels)},
		Ports: []networkingv1.NetworkPolicyPort{
			port(corev1.ProtocolUDP, dnsPort),
			port(corev1.ProtocolTCP, dnsPort),
		},
	}
}

// allowRule is one entry of an allow list: an IP block, or the pods of a
// namespace (all of them unless PodLabels narrows them; the component's own
// namespace when Namespace is empty), on the listed ports or all ports.
func allowRule(a api.EgressRule) (networkingv1.NetworkPolicyEgressRule, error) {
	var peer networkingv1.NetworkPolicyPeer
	switch {
	case a.CIDR != "":
		peer = ipBlock(a.CIDR, a.Except)
	case a.Namespace != "":
		peer = podsIn(a.Namespace, a.PodLabels)
	case len(a.PodLabels) > 0:
		peer = networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: a.PodLabels}}
	default:
		return networkingv1.NetworkPolicyEgressRule{}, fmt.Errorf("names no peer (cidr, namespace or podLabels)")
	}
	r := networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{peer}}
	for _, p := range a.Ports {
		proto := corev1.Protocol(p.Protocol)
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		r.Ports = append(r.Ports, port(proto, p.Port))
	}
	return r, nil
}

// podsIn selects the pods labelled podLabels (all pods when empty) in the
// namespace named ns.
func podsIn(ns string, podLabels map[string]string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{namespaceNameLabel: ns}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: podLabels},
	}
}

func ipBlock(cidr string, except []string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
}

func port(proto corev1.Protocol, p int32) networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Protocol: ptr.To(proto), Port: ptr.To(intstr.FromInt32(p))}
}
