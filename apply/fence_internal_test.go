package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The token goes on a copy of the metadata: the caller's object, which
// the loop keeps as its desired state, is left as it was.
func TestStampedLeavesTheCallersObjectAlone(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "annotations": map[string]any{"a": "1"}},
		"data":     map[string]any{"k": "v"},
	}}
	var o options
	Fenced("0002")(&o)
	got := o.stamped(obj)
	if got.GetAnnotations()[AnnotationFence] != "0002" || got.GetAnnotations()["a"] != "1" || got.GetName() != "c" {
		t.Errorf("stamped: %v", got.Object)
	}
	if _, ok := obj.GetAnnotations()[AnnotationFence]; ok || len(obj.GetAnnotations()) != 1 {
		t.Errorf("the caller's object changed: %v", obj.Object)
	}
	if same := o.stamped(got); same != got {
		t.Error("an object already carrying the token was copied again")
	}
}
