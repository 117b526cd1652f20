package reconcile_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

const (
	baseImage   = "registry.example.com/acme/resizer:1.0.0"
	euImage     = "registry.example.com/acme/resizer:1.0.0-eu"
	canaryImage = "registry.example.com/acme/resizer:1.1.0-rc1"
)

// inRegion configures a controller as cluster name labelled region=r.
func inRegion(name, r string) reconcile.Config {
	return reconcile.Config{Cluster: render.Cluster{Name: name}, ClusterLabels: map[string]string{"region": r}}
}

// euImageOverride gives the clusters labelled region=eu their own image.
func euImageOverride(c *api.Component) {
	c.Spec.Image = baseImage
	c.Spec.Overrides = append(c.Spec.Overrides, api.Override{
		ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}},
		Image:           euImage,
	})
}

func TestOverrideImageFollowsTheClusterLabels(t *testing.T) {
	eu, us := newEnv(t, inRegion("eu-1", "eu")), newEnv(t, inRegion("us-1", "us"))
	eu.start()
	us.start()
	for _, tc := range []struct {
		e    *env
		want string
	}{{eu, euImage}, {us, baseImage}} {
		rev := tc.e.publish(tc.e.component("resizer", euImageOverride))
		tc.e.waitStatus("resizer", api.ConditionApplied, "True", rev)
		tc.e.waitFor(deployments, "resizer", imageIs(tc.want))
	}
}

func TestConflictingOverridesStallOnlyTheClusterTheySelect(t *testing.T) {
	eu := newEnv(t, inRegion("eu-1", "eu"))
	us := eu.peer(inRegion("us-1", "us"))
	eu.start()
	us.start()
	rev := eu.publish(eu.component("resizer", euImageOverride, func(c *api.Component) {
		c.Spec.Overrides = append(c.Spec.Overrides, api.Override{Clusters: []string{"eu-1"}, Image: canaryImage})
	}))

	rec := eu.waitStatus("resizer", api.ConditionStalled, "True", rev)
	ready, _ := rec.Condition(api.ConditionApplied)
	want := `overrides for cluster "eu-1": spec.overrides[1].image: Invalid value: "` + canaryImage +
		`": conflicts with spec.overrides[0].image ("` + euImage + `")`
	if ready.Status != api.ConditionFalse || ready.Reason != reasons.InvalidOverride || !strings.Contains(ready.Message, want) {
		t.Errorf("eu-1 Ready %+v, want False, %s, naming %q", ready, reasons.InvalidOverride, want)
	}

	us.waitStatus("resizer", api.ConditionApplied, "True", rev)
	if rec := us.waitStatus("resizer", api.ConditionStalled, "False", rev); rec.Error != "" {
		t.Errorf("us-1 reports %q", rec.Error)
	}
	// The Deployment is us-1's: eu-1 applied nothing.
	d := us.waitFor(deployments, "resizer", imageIs(baseImage))
	if got := d.GetAnnotations()[render.AnnotationCluster]; got != "us-1" {
		t.Errorf("Deployment made by cluster %q, want us-1", got)
	}
}

// peer returns a second controller's env for the cluster cfg names: its
// own NATS connection to e's server and stores, in e's namespace, as a
// controller of another cluster of the same fleet would be. The two share
// one API server, so only one of them may apply a component's children.
func (e *env) peer(cfg reconcile.Config) *env {
	e.t.Helper()
	t := e.t
	p := &env{t: t, nats: e.nats, ns: e.ns, dyn: e.dyn, cfg: cfg}
	ctx := context.Background()
	var err error
	if p.conn, err = bus.Connect(ctx, bus.Config{URLs: []string{e.nats.URL()}, Name: t.Name() + "-peer"}, nil); err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(p.conn.Close)
	p.js = p.conn.JetStream()
	if p.specs, err = specs.Open(ctx, p.conn, specs.Config{}, kv.Ensure); err != nil {
		t.Fatalf("spec store: %v", err)
	}
	if p.statuses, err = status.Open(ctx, p.conn, status.Config{}, kv.Ensure); err != nil {
		t.Fatalf("status store: %v", err)
	}
	p.cfg.Namespaces, p.cfg.Recheck = e.cfg.Namespaces, e.cfg.Recheck
	return p
}
