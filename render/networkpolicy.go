package render

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/validate"
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

// noCollector is the Collector.Endpoint that means workers export no
// telemetry, so no rule allows a collector.
const noCollector = "-"

// networkPolicy denies every ingress to the worker's pods and allows the
// egress of the component's posture. Every posture includes the base rules
// (NATS, DNS and the collector), and every rule names its peers: a rule
// without peers would allow every destination.
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
			Ingress:     metricsIngress(c.Spec.MetricsPort, cl),
			Egress:      egress,
		},
	}
	return np, stamp(np, np, m)
}

// metricsIngress admits the cluster's monitoring namespaces to the port of
// spec.metricsPort, and nothing else: without it a worker takes no ingress.
func metricsIngress(metricsPort int32, cl Cluster) []networkingv1.NetworkPolicyIngressRule {
	if metricsPort == 0 {
		return nil
	}
	port := intstr.FromInt32(metricsPort)
	return []networkingv1.NetworkPolicyIngressRule{{
		From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: namespaceNameLabel, Operator: metav1.LabelSelectorOpIn, Values: slices.Clone(cl.MonitoringNamespaces)}}}}},
		Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: &port}},
	}}
}

func egressRules(e api.Egress, cl Cluster) ([]networkingv1.NetworkPolicyEgressRule, error) {
	rules, err := baseRules(cl)
	if err != nil {
		return nil, err
	}
	// The cluster's ranges are checked whatever the posture, so a bad
	// setting is reported at once, not when a component first asks for
	// internet egress.
	inCluster, err := clusterCIDRs(cl.Network)
	if err != nil {
		return nil, err
	}
	switch e.Mode {
	case api.EgressNone, "":
		return rules, nil
	case api.EgressCluster:
		return append(rules, networkingv1.NetworkPolicyEgressRule{
			To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}},
		}), nil
	case api.EgressInternet:
		return append(rules, internetRule(inCluster)), nil
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

// baseRules are the rules of every posture: NATS, cluster DNS, NodeLocal
// DNSCache when the cluster runs it, and the collector unless there is none.
func baseRules(cl Cluster) ([]networkingv1.NetworkPolicyEgressRule, error) {
	rules := []networkingv1.NetworkPolicyEgressRule{natsRule(cl.NATS), dnsRule(cl.DNS)}
	if ip := cl.DNS.NodeLocalIP; ip != "" {
		r, err := nodeLocalDNSRule(ip)
		if err != nil {
			return nil, fmt.Errorf("cluster dns nodeLocalIP %q: %w", ip, err)
		}
		rules = append(rules, r)
	}
	if cl.Collector.Endpoint == noCollector {
		return rules, nil
	}
	r, err := collectorRule(cl.Collector)
	if err != nil {
		return nil, err
	}
	return append(rules, r), nil
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
		To:    []networkingv1.NetworkPolicyPeer{podsIn(d.Namespace, d.PodLabels)},
		Ports: dnsPorts(),
	}
}

// nodeLocalDNSRule allows port 53 on the address NodeLocal DNSCache answers
// on. That address is on the node, not in a pod, so only an ipBlock names
// it; it is usually link-local, which `internet` egress excludes, and this
// rule is what makes it reachable.
func nodeLocalDNSRule(ip string) (networkingv1.NetworkPolicyEgressRule, error) {
	a, err := netip.ParseAddr(ip)
	switch {
	case err != nil || a.Zone() != "":
		return networkingv1.NetworkPolicyEgressRule{}, errors.New("invalid IP address")
	case a.Is4In6():
		return networkingv1.NetworkPolicyEgressRule{}, errors.New("an IPv4-mapped IPv6 address: write it as IPv4")
	case a.IsUnspecified():
		return networkingv1.NetworkPolicyEgressRule{}, errors.New("the unspecified address")
	}
	return networkingv1.NetworkPolicyEgressRule{
		To:    []networkingv1.NetworkPolicyPeer{ipBlock(netip.PrefixFrom(a, a.BitLen()).String(), nil)},
		Ports: dnsPorts(),
	}, nil
}

func dnsPorts() []networkingv1.NetworkPolicyPort {
	return []networkingv1.NetworkPolicyPort{port(corev1.ProtocolUDP, dnsPort), port(corev1.ProtocolTCP, dnsPort)}
}

// collectorRule allows the collector's OTLP ports, in ascending order, on
// the collector's pods.
func collectorRule(c Collector) (networkingv1.NetworkPolicyEgressRule, error) {
	for i, p := range c.Ports {
		if p < 1 || p > 65535 {
			return networkingv1.NetworkPolicyEgressRule{}, fmt.Errorf("cluster collector ports[%d] %d: want 1-65535", i, p)
		}
	}
	r := networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{podsIn(c.Namespace, c.PodLabels)}}
	for _, p := range slices.Compact(slices.Sorted(slices.Values(c.Ports))) {
		r.Ports = append(r.Ports, port(corev1.ProtocolTCP, p))
	}
	return r, nil
}

// internetRule allows every address but validate.MetadataRanges and the
// cluster's own ranges inCluster. Pods and Services are reached by
// rules that select them, never by address: a worker with `internet`
// egress may not reach another namespace's pods by IP. Each except list
// holds only its block's family, as the API requires.
func internetRule(inCluster []netip.Prefix) networkingv1.NetworkPolicyEgressRule {
	var v4, v6 []netip.Prefix
	excepted := slices.Clone(inCluster)
	for _, m := range validate.MetadataRanges {
		excepted = append(excepted, netip.MustParsePrefix(m))
	}
	for _, p := range excepted {
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{ipBlock(anyIPv4, exceptList(v4)), ipBlock(anyIPv6, exceptList(v6))},
	}
}

// exceptList returns ps sorted, without duplicates, as strings: the same
// ranges in any order give the same policy and the same content hash.
func exceptList(ps []netip.Prefix) []string {
	ps = slices.Compact(slices.SortedFunc(slices.Values(ps), netip.Prefix.Compare))
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// clusterCIDRs parses the cluster's pod and service ranges, naming the
// setting of the first one that is not a canonical, proper CIDR.
func clusterCIDRs(n Network) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range []struct {
		name  string
		cidrs []string
	}{{"podCIDRs", n.PodCIDRs}, {"serviceCIDRs", n.ServiceCIDRs}} {
		for i, c := range s.cidrs {
			p, err := clusterCIDR(c)
			if err != nil {
				return nil, fmt.Errorf("cluster network %s[%d] %q: %w", s.name, i, c, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// clusterCIDR parses one range. It must be canonical, as CIDRs in
// components must be, and narrower than a whole family: an except entry
// must lie strictly inside 0.0.0.0/0 or ::/0.
func clusterCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		return netip.Prefix{}, errors.New("invalid CIDR")
	case p.Addr().Is4In6():
		return netip.Prefix{}, errors.New("an IPv4-mapped IPv6 CIDR: write it as IPv4")
	case p != p.Masked():
		return netip.Prefix{}, fmt.Errorf("not canonical: write %s", p.Masked())
	case p.Bits() == 0:
		return netip.Prefix{}, errors.New("covers every address of its family")
	}
	return p, nil
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
