package reconcile_test

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// A suspended component is left as it is: a new image is not applied, an
// edit of its Deployment is not reverted, a placement that no longer
// selects the cluster prunes nothing, and the status says so, naming the
// revision. Resumed, the latest revision is applied and the edit
// reverted. An override suspends it on the clusters it selects only, and
// an explicit delete still removes it.
func TestASuspendedComponentIsLeftAsItIs(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.start()
	ctx := context.Background()
	const img1, img2, img3 = "registry.example.com/acme/thumbs:1", "registry.example.com/acme/thumbs:2", "registry.example.com/acme/thumbs:3"
	rev1 := e.publish(e.component("thumbs", func(c *api.Component) { c.Spec.Image = img1 }))
	e.waitStatus("thumbs", api.ConditionApplied, "True", rev1)

	rev2 := e.publish(e.component("thumbs", func(c *api.Component) { c.Spec.Image, c.Spec.Suspend = img2, true }))
	e.waitConditionSays("thumbs", rev1, api.ConditionApplied, "False", reasons.Suspended, fmt.Sprintf("revision %d is suspended", rev2))
	if rec, _ := e.status("thumbs"); rec.IsTrue(api.ConditionStalled) {
		t.Errorf("a suspended component reports Stalled: %+v", rec.Conditions)
	}
	live := e.get(deployments, "thumbs")
	ctrs, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	ctrs[0].(map[string]any)["image"] = "registry.example.com/evil:6.6.6"
	_ = unstructured.SetNestedSlice(live.Object, ctrs, "spec", "template", "spec", "containers")
	_, err := e.dyn.Resource(deployments).Namespace(e.ns).Update(ctx, live, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
	testenv.Must(t, err)
	// A later suspended revision whose placement selects another cluster
	// only: processed (the status names it), nothing pruned or reverted.
	rev3 := e.publish(e.component("thumbs", func(c *api.Component) {
		c.Spec.Image, c.Spec.Suspend = img2, true
		c.Spec.Placement = &api.Placement{Clusters: []string{"elsewhere"}}
	}))
	e.waitConditionSays("thumbs", rev1, api.ConditionApplied, "False", reasons.Suspended, fmt.Sprintf("revision %d is suspended", rev3))
	if err := imageIs("registry.example.com/evil:6.6.6")(e.get(deployments, "thumbs")); err != nil {
		t.Fatalf("suspended, the Deployment was changed: %v", err)
	}
	if e.get(networkPolicies, "thumbs") == nil {
		t.Fatal("suspended, the NetworkPolicy was pruned")
	}

	// Suspended by an override for another cluster only: applied here.
	rev4 := e.publish(e.component("thumbs", func(c *api.Component) {
		c.Spec.Image = img3
		c.Spec.Overrides = []api.Override{{Clusters: []string{"elsewhere"}, Suspend: ptr.To(true)}}
	}))
	e.waitStatus("thumbs", api.ConditionApplied, "True", rev4)
	e.waitFor(deployments, "thumbs", imageIs(img3))
	// By an override for this cluster: suspended here.
	rev5 := e.publish(e.component("thumbs", func(c *api.Component) {
		c.Spec.Image = img1
		c.Spec.Overrides = []api.Override{{Clusters: []string{e.cfg.Cluster.Name}, Suspend: ptr.To(true)}}
	}))
	e.waitConditionSays("thumbs", rev4, api.ConditionApplied, "False", reasons.Suspended, fmt.Sprintf("revision %d is suspended", rev5))
	if err := imageIs(img3)(e.get(deployments, "thumbs")); err != nil {
		t.Fatalf("suspended by an override for this cluster, the Deployment was changed: %v", err)
	}

	// An explicit delete removes a suspended component.
	testenv.Must(t, e.specs.Delete(ctx, api.KeyOf(defaults.Apply(e.component("thumbs"))), 0))
	e.waitGone(deployments, "thumbs")
	e.waitGone(networkPolicies, "thumbs")
	if _, err := e.js.Stream(ctx, render.StreamName(e.ns, "thumbs")); err != nil {
		t.Errorf("the stream of a deleted component (retained by default): %v", err)
	}
}
