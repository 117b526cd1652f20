package reconcile_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/reconcile"
)

var budgets = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// TestAComponentWithManyPodsKeepsAllButOneThroughDrains: two replicas get
// a PodDisruptionBudget that lets one pod go at a time, selecting the
// component's pods; down to one replica it is pruned (it would block
// every drain of the pod's node); scaled up to three, it comes back.
func TestAComponentWithManyPodsKeepsAllButOneThroughDrains(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.start()
	replicas := func(n int32) func(*api.Component) { return func(c *api.Component) { c.Spec.Replicas = ptr.To(n) } }

	e.waitStatus("pair", api.ConditionApplied, "True", e.publish(e.component("pair", replicas(2))))
	pdb := e.waitFor(budgets, "pair", nil)
	if got, _, _ := unstructured.NestedInt64(pdb.Object, "spec", "maxUnavailable"); got != 1 {
		t.Errorf("maxUnavailable = %d, want 1", got)
	}
	if sel, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels"); sel["tinyctl.io/component"] != e.ns+".pair" {
		t.Errorf("the budget selects %v, not the component's pods", sel)
	}

	e.waitStatus("pair", api.ConditionApplied, "True", e.publish(e.component("pair", replicas(1))))
	e.waitGone(budgets, "pair")

	scaled := func(c *api.Component) { c.Spec.Scaling = &api.Scaling{MinReplicas: 0, MaxReplicas: 3} }
	rev := e.publish(e.component("pair", scaled))
	e.waitFor(budgets, "pair", func(u *unstructured.Unstructured) error {
		if u.GetAnnotations()["tinyctl.io/revision"] != fmt.Sprint(rev) {
			return fmt.Errorf("budget at revision %s, want %d", u.GetAnnotations()["tinyctl.io/revision"], rev)
		}
		return nil
	})
}
