package provision_test

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/internal/testkit/netpol"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// TestInstallWithThreeBrokerReplicas: Plan.BrokerReplicas 3 (install
// --broker-replicas 3) runs three broker pods routed to each other and a
// controller keeping three copies, through the real API server with no
// PodSecurity warning; an even count is refused before anything is
// written.
func TestInstallWithThreeBrokerReplicas(t *testing.T) {
	r := newRuntime(t, provision.Options{})
	if _, err := r.p.Install(context.Background(), provision.Plan{BrokerReplicas: 2}, nil); err == nil ||
		!strings.Contains(err.Error(), "want 1, 3 or 5") {
		t.Fatalf("install with 2 broker replicas: %v, want refused", err)
	}
	r.install(provision.Plan{BrokerReplicas: 3, SkipCollector: true, SkipCRDs: true})

	sts := r.get(objectRef{resources["StatefulSet"], "StatefulSet", r.ns, "nats"})
	if n, _, _ := unstructured.NestedInt64(sts.Object, "spec", "replicas"); n != 3 {
		t.Errorf("broker StatefulSet replicas = %d, want 3", n)
	}
	cm := r.get(objectRef{resources["ConfigMap"], "ConfigMap", r.ns, "nats-config"})
	conf, _, _ := unstructured.NestedString(cm.Object, "data", "nats.conf")
	if want := "nats://nats-2.nats-headless." + r.ns + ".svc:6222"; !strings.Contains(conf, want) {
		t.Errorf("nats.conf lacks route %s:\n%s", want, conf)
	}
	dep := r.get(objectRef{resources["Deployment"], "Deployment", r.ns, "tinyctl"})
	args := containerArgs(t, dep)
	if !slices.Contains(args, "--replicas=3") {
		t.Errorf("controller args %v lack --replicas=3", args)
	}
	// Installed without the collector: workers must not be told of one.
	if !slices.Contains(args, "--collector-endpoint=-") {
		t.Errorf("controller args %v lack --collector-endpoint=- (installed without a collector)", args)
	}
	if w := r.warnings.PodSecurity(); len(w) > 0 {
		t.Errorf("PodSecurity warnings: %v", w)
	}

	// Routes authenticate with a certificate install made for the pods'
	// names, kept as it is by the next install.
	routes := r.get(objectRef{resources["Secret"], "Secret", r.ns, keyring.RoutesSecret})
	if routes == nil {
		t.Fatalf("no Secret %s", keyring.RoutesSecret)
	}
	if err := keyring.RoutesCertificateCovers(secretBytes(t, routes), keyring.RouteNames("nats", r.ns), time.Now()); err != nil {
		t.Errorf("routes certificate: %v", err)
	}
	for _, res := range r.install(provision.Plan{BrokerReplicas: 3, SkipCollector: true, SkipCRDs: true}) {
		if res.Kind == "Secret" && res.Name == keyring.RoutesSecret && res.Action != action.Unchanged {
			t.Errorf("second install: %s", res)
		}
	}

	// Who reaches the broker pods, by the NetworkPolicy the API server
	// holds: clients from anywhere, routes from broker pods only,
	// monitoring from KEDA's and Prometheus's namespaces only, and the
	// closed leafnode port from nobody.
	ev := brokerPolicy(t, r)
	broker := netpol.Pod{Namespace: r.ns, Labels: map[string]string{"app.kubernetes.io/name": "nats", "app.kubernetes.io/instance": "nats"}}
	worker := netpol.PodPeer(netpol.Pod{Namespace: "default", Labels: map[string]string{"app": "worker"}})
	sameNS := netpol.PodPeer(netpol.Pod{Namespace: r.ns, Labels: map[string]string{"app.kubernetes.io/name": "tinyctl"}})
	for _, c := range []struct {
		what string
		from netpol.Peer
		port int32
		want bool
	}{
		{"a worker to the client port", worker, 4222, true},
		{"a worker to the monitoring port", worker, 8222, false},
		{"a worker to the route port", worker, 6222, false},
		{"a worker to the leafnode port", worker, 7422, false},
		{"the controller to the route port", sameNS, 6222, false},
		{"the controller to the monitoring port", sameNS, 8222, false},
		{"another broker pod to the route port", netpol.PodPeer(broker), 6222, true},
		{"KEDA to the monitoring port", netpol.PodPeer(netpol.Pod{Namespace: "keda", Labels: map[string]string{"app": "keda-operator"}}), 8222, true},
		{"Prometheus to the monitoring port", netpol.PodPeer(netpol.Pod{Namespace: "monitoring"}), 8222, true},
		{"an address outside the cluster to the client port", netpol.IPPeer(netip.MustParseAddr("203.0.113.9")), 4222, true},
	} {
		if got := ev.Ingress(broker, c.from, c.port, corev1.ProtocolTCP); got != c.want {
			t.Errorf("%s: allowed %t, want %t", c.what, got, c.want)
		}
	}
}

// brokerPolicy evaluates the broker's NetworkPolicy as the API server
// stores it.
func brokerPolicy(t *testing.T, r *runtime) *netpol.Evaluator {
	t.Helper()
	obj := r.get(objectRef{resources["NetworkPolicy"], "NetworkPolicy", r.ns, "nats"})
	if obj == nil {
		t.Fatal("the broker has no NetworkPolicy")
	}
	var np networkingv1.NetworkPolicy
	testenv.Must(t, kruntime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &np))
	ev, err := netpol.New([]networkingv1.NetworkPolicy{np}, nil)
	testenv.Must(t, err)
	return ev
}

// secretBytes decodes an unstructured Secret's data.
func secretBytes(t *testing.T, s *unstructured.Unstructured) map[string][]byte {
	t.Helper()
	var typed corev1.Secret
	testenv.Must(t, kruntime.DefaultUnstructuredConverter.FromUnstructured(s.Object, &typed))
	return typed.Data
}
