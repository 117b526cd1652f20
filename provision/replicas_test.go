package provision_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/provision"
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
}
