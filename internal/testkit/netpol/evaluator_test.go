package netpol_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/internal/testkit/netpol"
)

// The pods and addresses the cases ask about. Every policy below is in
// namespace "app" and selects worker unless it says otherwise.
var (
	worker    = netpol.Pod{Namespace: "app", Labels: map[string]string{"role": "worker"}, IP: addr("10.0.0.5")}
	db        = netpol.Pod{Namespace: "app", Labels: map[string]string{"role": "db"}, IP: addr("10.0.0.6")}
	otherDB   = netpol.Pod{Namespace: "data", Labels: map[string]string{"role": "db"}, IP: addr("10.0.1.6")}
	otherWeb  = netpol.Pod{Namespace: "data", Labels: map[string]string{"role": "web"}, IP: addr("10.0.1.7")}
	noIPDB    = netpol.Pod{Namespace: "data", Labels: map[string]string{"role": "db"}}
	public    = netpol.IPPeer(addr("203.0.113.9"))
	public6   = netpol.IPPeer(addr("2001:db8::9"))
	excepted  = netpol.IPPeer(addr("203.0.113.200"))
	elsewhere = netpol.IPPeer(addr("198.51.100.1"))
)

// namespaceLabels are the labels the cases give their namespaces.
var namespaceLabels = map[string]map[string]string{
	"app":  {"tier": "front"},
	"data": {"tier": "back"},
}

// probe is one question and its expected answer: egress from pod to peer,
// or ingress to pod from peer when ingress is set.
type probe struct {
	ingress bool
	pod     netpol.Pod
	peer    netpol.Peer
	port    int32
	proto   corev1.Protocol
	want    bool
}

func egress(peer netpol.Peer, port int32, proto corev1.Protocol, want bool) probe {
	return probe{pod: worker, peer: peer, port: port, proto: proto, want: want}
}

func ingress(peer netpol.Peer, port int32, want bool) probe {
	return probe{ingress: true, pod: worker, peer: peer, port: port, proto: corev1.ProtocolTCP, want: want}
}

func TestPolicySemantics(t *testing.T) {
	tests := []struct {
		name     string
		policies []networkingv1.NetworkPolicy
		probes   []probe
	}{
		{"a pod no policy selects may send and receive anything",
			[]networkingv1.NetworkPolicy{policy("app", map[string]string{"role": "db"}, egressType)},
			[]probe{egress(public, 443, "", true), ingress(public, 80, true)}},
		{"a policy of another namespace does not select the pod",
			[]networkingv1.NetworkPolicy{policy("data", nil, egressType)},
			[]probe{egress(public, 443, "", true)}},
		{"a selected pod with no egress rule sends nothing",
			[]networkingv1.NetworkPolicy{policy("app", worker.Labels, egressType)},
			[]probe{egress(public, 443, "", false), egress(netpol.PodPeer(db), 5432, "", false), ingress(public, 80, true)}},
		{"an ingress-only policy denies ingress and leaves egress open",
			[]networkingv1.NetworkPolicy{policy("app", nil, ingressType)},
			[]probe{egress(public, 443, "", true), ingress(public, 80, false), ingress(netpol.PodPeer(db), 80, false)}},
		{"empty policyTypes with egress rules means ingress and egress",
			[]networkingv1.NetworkPolicy{policy("app", nil, nil, toRule(nil, tcp(443)))},
			[]probe{egress(public, 443, "", true), egress(public, 80, "", false), ingress(public, 80, false)}},
		{"empty policyTypes without egress rules means ingress only",
			[]networkingv1.NetworkPolicy{policy("app", nil, nil)},
			[]probe{egress(public, 80, "", true), ingress(public, 80, false)}},
		{"a rule without peers allows every peer on its ports",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(nil, tcp(443)))},
			[]probe{egress(public, 443, "", true), egress(netpol.PodPeer(otherDB), 443, "", true), egress(public, 80, "", false)}},
		{"a rule without ports allows every port and protocol to its peers",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(block("203.0.113.0/24"))))},
			[]probe{egress(public, 1, "", true), egress(public, 65535, corev1.ProtocolUDP, true), egress(elsewhere, 443, "", false)}},
		{"rules and policies add up",
			[]networkingv1.NetworkPolicy{
				policy("app", nil, egressType, toRule(peers(block("203.0.113.0/24")), tcp(443))),
				policy("app", worker.Labels, egressType, toRule(peers(block("198.51.100.0/24")), tcp(80))),
			},
			[]probe{egress(public, 443, "", true), egress(elsewhere, 80, "", true), egress(public, 80, "", false), egress(elsewhere, 443, "", false)}},
		{"podSelector alone selects pods of the policy's namespace only",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(pods(map[string]string{"role": "db"}))))},
			[]probe{egress(netpol.PodPeer(db), 5432, "", true), egress(netpol.PodPeer(otherDB), 5432, "", false)}},
		{"namespaceSelector alone selects every pod of the namespaces",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(namespaces(map[string]string{"tier": "back"}))))},
			[]probe{egress(netpol.PodPeer(otherDB), 5432, "", true), egress(netpol.PodPeer(otherWeb), 80, "", true), egress(netpol.PodPeer(db), 5432, "", false)}},
		{"both selectors in one peer must both match",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(podsIn(map[string]string{"tier": "back"}, map[string]string{"role": "db"}))))},
			[]probe{egress(netpol.PodPeer(otherDB), 5432, "", true), egress(netpol.PodPeer(otherWeb), 80, "", false), egress(netpol.PodPeer(db), 5432, "", false)}},
		{"two peers of one rule match either",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(namespaces(map[string]string{"tier": "back"}), pods(map[string]string{"role": "db"}))))},
			[]probe{egress(netpol.PodPeer(otherWeb), 80, "", true), egress(netpol.PodPeer(db), 5432, "", true), egress(netpol.PodPeer(worker), 80, "", false)}},
		{"every namespace has its metadata.name label, listed or not",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(
				namespaces(map[string]string{"kubernetes.io/metadata.name": "data"}),
				namespaces(map[string]string{"kubernetes.io/metadata.name": "unlisted"}))))},
			[]probe{egress(netpol.PodPeer(otherDB), 5432, "", true), egress(netpod("unlisted"), 80, "", true), egress(netpod("app"), 80, "", false)}},
		{"matchExpressions select namespaces",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(networkingv1.NetworkPolicyPeer{
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"front"}}}},
			})))},
			[]probe{egress(netpol.PodPeer(otherDB), 5432, "", true), egress(netpol.PodPeer(db), 5432, "", false)}},
		{"selectors never match an address outside any pod",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(namespaces(map[string]string{}))))},
			[]probe{egress(netpol.PodPeer(otherDB), 5432, "", true), egress(public, 443, "", false)}},
		{"an ipBlock matches inside cidr and outside except",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(block("203.0.113.0/24", "203.0.113.128/25"))))},
			[]probe{egress(public, 443, "", true), egress(excepted, 443, "", false), egress(elsewhere, 443, "", false)}},
		{"an ipBlock matches a pod by its IP, not a pod with no known IP",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(block("10.0.1.0/24"))))},
			[]probe{egress(netpol.PodPeer(otherDB), 5432, "", true), egress(netpol.PodPeer(noIPDB), 5432, "", false), egress(netpol.PodPeer(db), 5432, "", false)}},
		{"IPv4 blocks do not match IPv6 addresses",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(peers(block("0.0.0.0/0"))))},
			[]probe{egress(public, 443, "", true), egress(public6, 443, "", false)}},
		{"a port's protocol defaults to TCP",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(nil, networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(53))}))},
			[]probe{egress(public, 53, corev1.ProtocolTCP, true), egress(public, 53, "", true), egress(public, 53, corev1.ProtocolUDP, false)}},
		{"a port without a number allows every port of its protocol",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(nil, networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolUDP)}))},
			[]probe{egress(public, 53, corev1.ProtocolUDP, true), egress(public, 9999, corev1.ProtocolUDP, true), egress(public, 53, corev1.ProtocolTCP, false)}},
		{"endPort allows the range inclusive",
			[]networkingv1.NetworkPolicy{policy("app", nil, egressType, toRule(nil, networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(8000)), EndPort: ptr.To[int32](8080)}))},
			[]probe{egress(public, 8000, "", true), egress(public, 8080, "", true), egress(public, 7999, "", false), egress(public, 8081, "", false)}},
		{"ingress rules match the source and the destination port",
			[]networkingv1.NetworkPolicy{policy("app", nil, ingressType, fromRule(peers(block("203.0.113.0/24"), pods(map[string]string{"role": "db"})), tcp(8080)))},
			[]probe{ingress(public, 8080, true), ingress(netpol.PodPeer(db), 8080, true), ingress(public, 8081, false), ingress(elsewhere, 8080, false), ingress(netpol.PodPeer(otherDB), 8080, false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := netpol.New(tt.policies, namespaceLabels)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range tt.probes {
				got := ev.Egress(p.pod, p.peer, p.port, p.proto)
				if p.ingress {
					got = ev.Ingress(p.pod, p.peer, p.port, p.proto)
				}
				if got != p.want {
					t.Errorf("probe %d (%+v): allowed = %t, want %t", i, p, got, p.want)
				}
			}
		})
	}
}

func TestNewRefusesWhatTheAPIServerRefuses(t *testing.T) {
	tests := []struct {
		name  string
		rule  networkingv1.NetworkPolicyEgressRule
		field string
	}{
		{"a peer naming nothing", toRule(peers(networkingv1.NetworkPolicyPeer{})), "spec.egress[0].to[0]"},
		{"an ipBlock with a selector", toRule(peers(networkingv1.NetworkPolicyPeer{
			IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, PodSelector: &metav1.LabelSelector{},
		})), "spec.egress[0].to[0]"},
		{"an invalid CIDR", toRule(peers(block("10.0.0.0/33"))), "spec.egress[0].to[0]: ipBlock.cidr"},
		{"an except outside cidr", toRule(peers(block("10.0.0.0/16", "10.1.0.0/24"))), "ipBlock.except[0]"},
		{"an except equal to cidr", toRule(peers(block("10.0.0.0/16", "10.0.0.0/16"))), "ipBlock.except[0]"},
		{"an endPort below port", toRule(nil, networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(80)), EndPort: ptr.To[int32](79)}), "spec.egress[0].ports[0]"},
		{"an endPort without port", toRule(nil, networkingv1.NetworkPolicyPort{EndPort: ptr.To[int32](79)}), "spec.egress[0].ports[0]"},
		{"a bad selector operator", toRule(peers(networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}},
		}})), "spec.egress[0].to[0]: podSelector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := netpol.New([]networkingv1.NetworkPolicy{policy("app", nil, egressType, tt.rule)}, nil)
			if err == nil || !strings.HasPrefix(err.Error(), "networkpolicy app/p: spec.egress[0]") || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("New error = %v, want one naming %s", err, tt.field)
			}
		})
	}
}

func TestNamedPortsAreUnsupported(t *testing.T) {
	named := toRule(nil, networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromString("http"))})
	_, err := netpol.New([]networkingv1.NetworkPolicy{policy("app", nil, egressType, named)}, nil)
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), `"http"`) {
		t.Errorf("New error = %v, want errors.ErrUnsupported naming the port", err)
	}
}

var (
	egressType  = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
	ingressType = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
)

// policy is a policy named p in namespace ns selecting the pods labelled
// podLabels (every pod when nil) for types; rules are egress rules, or
// ingress rules when built by fromRule.
func policy(ns string, podLabels map[string]string, types []networkingv1.PolicyType, rules ...any) networkingv1.NetworkPolicy {
	np := networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: podLabels},
			PolicyTypes: types,
		},
	}
	for _, r := range rules {
		switch r := r.(type) {
		case networkingv1.NetworkPolicyEgressRule:
			np.Spec.Egress = append(np.Spec.Egress, r)
		case networkingv1.NetworkPolicyIngressRule:
			np.Spec.Ingress = append(np.Spec.Ingress, r)
		}
	}
	return np
}

func toRule(to []networkingv1.NetworkPolicyPeer, ports ...networkingv1.NetworkPolicyPort) networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{To: to, Ports: ports}
}

func fromRule(from []networkingv1.NetworkPolicyPeer, ports ...networkingv1.NetworkPolicyPort) networkingv1.NetworkPolicyIngressRule {
	return networkingv1.NetworkPolicyIngressRule{From: from, Ports: ports}
}

func peers(p ...networkingv1.NetworkPolicyPeer) []networkingv1.NetworkPolicyPeer { return p }

func pods(l map[string]string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: l}}
}

func namespaces(l map[string]string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: l}}
}

func podsIn(ns, l map[string]string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: ns},
		PodSelector:       &metav1.LabelSelector{MatchLabels: l},
	}
}

func block(cidr string, except ...string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
}

func tcp(port int32) networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(port))}
}

// netpod is an unlabelled pod without a known IP in namespace ns.
func netpod(ns string) netpol.Peer { return netpol.PodPeer(netpol.Pod{Namespace: ns}) }

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }
