package netpol_test

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/internal/testkit/netpol"
)

// A policy that lets a worker query cluster DNS and nothing else: DNS is
// allowed, the cloud metadata endpoint is not, and ingress is untouched
// because the policy names only Egress.
func ExampleEvaluator_Egress() {
	udp := corev1.ProtocolUDP
	np := networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "workers", Name: "dns-only"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "worker"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress: []networkingv1.NetworkPolicyEgressRule{{
				To: []networkingv1.NetworkPolicyPeer{{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
				}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: ptr.To(intstr.FromInt32(53))}},
			}},
		},
	}
	ev, err := netpol.New([]networkingv1.NetworkPolicy{np}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	worker := netpol.Pod{Namespace: "workers", Labels: map[string]string{"app": "worker"}}
	dns := netpol.PodPeer(netpol.Pod{Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}})
	metadata := netpol.IPPeer(netip.MustParseAddr("169.254.169.254"))

	fmt.Println("dns udp/53:", ev.Egress(worker, dns, 53, corev1.ProtocolUDP))
	fmt.Println("dns tcp/53:", ev.Egress(worker, dns, 53, corev1.ProtocolTCP))
	fmt.Println("metadata tcp/80:", ev.Egress(worker, metadata, 80, corev1.ProtocolTCP))
	fmt.Println("ingress from metadata:", ev.Ingress(worker, metadata, 8080, corev1.ProtocolTCP))
	// Output:
	// dns udp/53: true
	// dns tcp/53: false
	// metadata tcp/80: false
	// ingress from metadata: true
}
