package reconcile_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

func TestDriftIsReverted(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.start()
	comp := e.component("thumbs")
	rev := e.publish(comp)
	e.waitStatus("thumbs", api.ConditionApplied, "True", rev)
	ctx := context.Background()

	// Another manager edits a field tinyctl owns: it is reverted.
	live := e.get(deployments, "thumbs")
	ctrs, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	ctrs[0].(map[string]any)["image"] = "registry.example.com/evil:6.6.6"
	_ = unstructured.SetNestedSlice(live.Object, ctrs, "spec", "template", "spec", "containers")
	if _, err := e.dyn.Resource(deployments).Namespace(e.ns).Update(ctx, live, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(deployments, "thumbs", imageIs(comp.Spec.Image))

	// A deleted Deployment is re-created.
	if err := e.dyn.Resource(deployments).Namespace(e.ns).Delete(ctx, "thumbs", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(deployments, "thumbs", imageIs(comp.Spec.Image))

	// A stream deleted behind tinyctl's back is re-created, with its consumer.
	stream := render.StreamName(e.ns, "thumbs")
	if err := e.js.DeleteStream(ctx, stream); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() error {
		_, err := e.js.Consumer(ctx, stream, render.ConsumerName(e.ns, "thumbs"))
		return err
	})
}
