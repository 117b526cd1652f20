package render_test

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/internal/testkit/netpol"
	"github.com/tinyctl/tinyctl/render"
)

// The four postures, named as the posture cases are.
const (
	none     = "none"
	cluster  = "cluster"
	internet = "internet"
	allow    = "allow"
)

var everyPosture = []string{none, cluster, internet, allow}

// postureCases renders each posture for networkCluster. The allow list
// names a public block on 443 and the namespace "partner".
func postureCases() []renderCase {
	cl := networkCluster()
	mode := func(name, m string) api.Component {
		return component(name, api.Spec{Egress: api.Egress{Mode: m}})
	}
	allowed := component("crawler", api.Spec{Egress: api.Egress{Mode: api.EgressAllow, Allow: []api.EgressRule{
		{CIDR: "93.184.216.0/24", Ports: []api.Port{{Port: 443}}},
		{Namespace: "partner"},
	}}})
	return []renderCase{
		{none, mode("quiet", api.EgressNone), cl},
		{cluster, mode("fetcher", api.EgressCluster), cl},
		{internet, mode("notifier", api.EgressInternet), cl},
		{allow, allowed, cl},
	}
}

// The pods a worker may talk to in networkCluster, with addresses in its
// pod range (10.244.0.0/16).
var (
	natsPod      = pod("tinyctl-system", "10.244.1.10", "app.kubernetes.io/name", "nats")
	dnsPod       = pod("kube-system", "10.244.0.3", "k8s-app", "kube-dns")
	collectorPod = pod("tinyctl-system", "10.244.1.11", "app.kubernetes.io/name", "collector")
	neighbour    = pod("workers", "10.244.4.9", "app", "other")
	billingPod   = pod("billing", "10.244.2.20", "app", "api")
	partnerPod   = pod("partner", "10.244.3.30", "app", "api")
)

// egressProbe is a connection a worker may open, and the postures that
// allow it.
type egressProbe struct {
	name      string
	to        netpol.Peer
	port      int32
	proto     corev1.Protocol
	allowedIn []string
}

func egressProbes() []egressProbe {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	return []egressProbe{
		{"NATS client port", natsPod, 4222, tcp, everyPosture},
		// Only `cluster` reaches the broker's monitoring port: it allows
		// every port of every pod, NATS's included.
		{"NATS monitoring port", natsPod, 8222, tcp, []string{cluster}},
		{"cluster DNS over UDP", dnsPod, 53, udp, everyPosture},
		{"cluster DNS over TCP", dnsPod, 53, tcp, everyPosture},
		{"NodeLocal DNSCache over UDP", ip("169.254.20.10"), 53, udp, everyPosture},
		{"NodeLocal DNSCache over TCP", ip("169.254.20.10"), 53, tcp, everyPosture},
		{"NodeLocal DNSCache on another port", ip("169.254.20.10"), 80, tcp, nil},
		{"collector OTLP gRPC", collectorPod, 4317, tcp, everyPosture},
		{"collector OTLP HTTP", collectorPod, 4318, tcp, everyPosture},
		{"cloud metadata endpoint", ip("169.254.169.254"), 80, tcp, nil},
		{"AWS IPv6 metadata endpoint", ip("fd00:ec2::254"), 80, tcp, nil},
		{"IPv6 link-local address", ip("fe80::1"), 80, tcp, nil},
		{"public address on 443", ip("93.184.216.34"), 443, tcp, []string{internet, allow}},
		{"public address on 80", ip("93.184.216.34"), 80, tcp, []string{internet}},
		{"public IPv6 address", ip("2606:2800:220:1::1946"), 443, tcp, []string{internet}},
		{"address in the pod range", ip("10.244.5.5"), 8080, tcp, nil},
		{"address in the service range", ip("10.96.0.1"), 443, tcp, nil},
		{"address in the IPv6 pod range", ip("fd00:10:244::5"), 8080, tcp, nil},
		{"address in the IPv6 service range", ip("fd00:10:96::1"), 443, tcp, nil},
		{"pod in the worker's namespace", neighbour, 8080, tcp, []string{cluster}},
		{"pod in another namespace", billingPod, 8080, tcp, []string{cluster}},
		{"pod in the namespace the allow list names", partnerPod, 8080, tcp, []string{cluster, allow}},
	}
}

// TestEgressPostures renders every posture and asks the NetworkPolicy
// evaluator what a worker may reach: the base rules hold in every posture,
// nothing reaches the metadata endpoints or the cluster's ranges by
// address, and each posture adds only what it promises.
func TestEgressPostures(t *testing.T) {
	for _, tc := range postureCases() {
		t.Run(tc.name, func(t *testing.T) {
			ev, worker := evaluate(t, tc)
			for _, p := range egressProbes() {
				want := slices.Contains(p.allowedIn, tc.name)
				if got := ev.Egress(worker, p.to, p.port, p.proto); got != want {
					t.Errorf("%s (%d/%s): allowed = %t, want %t", p.name, p.port, p.proto, got, want)
				}
			}
		})
	}
}

// TestWorkersAcceptNoConnection checks that every posture denies all
// ingress to the worker, from pods and addresses alike.
func TestWorkersAcceptNoConnection(t *testing.T) {
	for _, tc := range postureCases() {
		t.Run(tc.name, func(t *testing.T) {
			ev, worker := evaluate(t, tc)
			from := []netpol.Peer{natsPod, neighbour, partnerPod, ip("10.244.4.10"), ip("93.184.216.34"), ip("169.254.20.10")}
			for _, p := range from {
				for _, port := range []int32{80, 8080, 9090} {
					if ev.Ingress(worker, p, port, corev1.ProtocolTCP) {
						t.Errorf("ingress from %+v on %d is allowed", p, port)
					}
				}
			}
		})
	}
}

// TestOnlyMonitoringScrapesMetrics: spec.metricsPort opens one port, to the
// cluster's monitoring namespaces only; without it nothing may connect.
func TestOnlyMonitoringScrapesMetrics(t *testing.T) {
	prometheus := pod("monitoring", "10.244.5.5", "app.kubernetes.io/name", "prometheus")
	for _, want := range []int32{9464, 9100} {
		tc := renderCase{"metrics", component("scraped", api.Spec{MetricsPort: want}), networkCluster()}
		ev, worker := evaluate(t, tc)
		if !ev.Ingress(worker, prometheus, want, corev1.ProtocolTCP) {
			t.Errorf("port %d: Prometheus in namespace monitoring may not scrape the worker", want)
		}
		for _, probe := range []struct {
			from netpol.Peer
			port int32
		}{{prometheus, 8080}, {prometheus, 8081}, {neighbour, want}, {natsPod, want}, {ip("10.244.4.10"), want}} {
			if ev.Ingress(worker, probe.from, probe.port, corev1.ProtocolTCP) {
				t.Errorf("port %d: ingress from %+v on %d is allowed", want, probe.from, probe.port)
			}
		}
	}
}

// TestNoCollectorMeansNoCollectorRule checks that Collector.Endpoint "-"
// removes the collector's rule: the collector is then reachable only
// where a posture reaches every pod.
func TestNoCollectorMeansNoCollectorRule(t *testing.T) {
	for _, tc := range postureCases() {
		t.Run(tc.name, func(t *testing.T) {
			tc.cluster.Collector.Endpoint = "-"
			ev, worker := evaluate(t, tc)
			for _, port := range []int32{4317, 4318} {
				if got, want := ev.Egress(worker, collectorPod, port, corev1.ProtocolTCP), tc.name == cluster; got != want {
					t.Errorf("collector port %d: allowed = %t, want %t", port, got, want)
				}
			}
			with, without := len(mustRender(t, postureCase(t, tc.name)).NetworkPolicy.Spec.Egress), len(mustRender(t, tc).NetworkPolicy.Spec.Egress)
			if without != with-1 {
				t.Errorf("%d egress rules without a collector, %d with one: want exactly one fewer", without, with)
			}
		})
	}
}

// TestClusterRangesInAnyOrderRenderTheSame checks that the order of the
// cluster's ranges and of the collector's ports does not reach the policy
// or its content hash.
func TestClusterRangesInAnyOrderRenderTheSame(t *testing.T) {
	tc := postureCase(t, internet)
	first := mustRender(t, tc).NetworkPolicy
	n := &tc.cluster.Network
	slices.Reverse(n.PodCIDRs)
	n.ServiceCIDRs = append([]string{"fd00:10:96::/112"}, n.ServiceCIDRs...)
	tc.cluster.Collector.Ports = []int32{4318, 4317, 4318}
	again := mustRender(t, tc).NetworkPolicy
	h1, h2 := first.Annotations[render.AnnotationContentHash], again.Annotations[render.AnnotationContentHash]
	if h1 != h2 {
		t.Errorf("content hash changed with the order of the settings: %s -> %s", h1, h2)
	}
}

// TestBadClusterSettingsAreNamed checks that a cluster setting the API
// server would refuse in a policy fails rendering, in every posture, with
// an error naming the setting.
func TestBadClusterSettingsAreNamed(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(cl *render.Cluster)
		want    string
	}{
		{"pod range is not a CIDR", func(cl *render.Cluster) { cl.Network.PodCIDRs[1] = "x" },
			`cluster network podCIDRs[1] "x": invalid CIDR`},
		{"service range has host bits", func(cl *render.Cluster) { cl.Network.ServiceCIDRs[0] = "10.96.0.1/12" },
			`cluster network serviceCIDRs[0] "10.96.0.1/12": not canonical: write 10.96.0.0/12`},
		{"pod range is a whole family", func(cl *render.Cluster) { cl.Network.PodCIDRs[0] = "0.0.0.0/0" },
			`cluster network podCIDRs[0] "0.0.0.0/0": covers every address`},
		{"pod range is IPv4-mapped IPv6", func(cl *render.Cluster) { cl.Network.PodCIDRs[0] = "::ffff:10.244.0.0/112" },
			`cluster network podCIDRs[0] "::ffff:10.244.0.0/112": an IPv4-mapped IPv6 CIDR`},
		{"NodeLocal address is not an IP", func(cl *render.Cluster) { cl.DNS.NodeLocalIP = "169.254.20" },
			`cluster dns nodeLocalIP "169.254.20": invalid IP address`},
		{"collector port is out of range", func(cl *render.Cluster) { cl.Collector.Ports = []int32{4317, 70000} },
			`cluster collector ports[1] 70000: want 1-65535`},
	}
	if err := networkCluster().Check(); err != nil {
		t.Fatalf("Check() of good settings = %v", err)
	}
	for _, tt := range tests {
		for _, tc := range postureCases() {
			t.Run(tt.name+"/"+tc.name, func(t *testing.T) {
				tt.breakIt(&tc.cluster)
				_, err := render.Render(defaults.Apply(tc.component), testRevision, tc.cluster)
				if !errors.Is(err, api.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Render error = %v, want ErrInvalid with %q", err, tt.want)
				}
				if err := tc.cluster.Check(); err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Check() = %v, want an error with %q", err, tt.want)
				}
			})
		}
	}
}

// evaluate renders tc and returns an evaluator of its NetworkPolicy and the
// worker as the policy sees it: the Deployment's pod labels, in the
// component's namespace, at an address in the pod range.
func evaluate(t *testing.T, tc renderCase) (*netpol.Evaluator, netpol.Pod) {
	t.Helper()
	objs := mustRender(t, tc)
	ev, err := netpol.New([]networkingv1.NetworkPolicy{*objs.NetworkPolicy}, nil)
	if err != nil {
		t.Fatal(err)
	}
	worker := netpol.Pod{
		Namespace: objs.Deployment.Namespace,
		Labels:    objs.Deployment.Spec.Template.Labels,
		IP:        netip.MustParseAddr("10.244.4.4"),
	}
	return ev, worker
}

func postureCase(t *testing.T, name string) renderCase {
	t.Helper()
	for _, tc := range postureCases() {
		if tc.name == name {
			return tc
		}
	}
	t.Fatalf("no posture case %q", name)
	return renderCase{}
}

func pod(ns, addr, key, value string) netpol.Peer {
	return netpol.PodPeer(netpol.Pod{Namespace: ns, Labels: map[string]string{key: value}, IP: netip.MustParseAddr(addr)})
}

func ip(s string) netpol.Peer { return netpol.IPPeer(netip.MustParseAddr(s)) }
