package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// BenchmarkDesiredFields measures the field set of a Deployment (what the
// zero-write skip computes when another manager is on the object).
func BenchmarkDesiredFields(b *testing.B) {
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "w", "namespace": "ns", "labels": map[string]any{"a": "b"}},
		"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "w", "image": "i",
					"env": []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"}}}}}}},
	}}
	for b.Loop() {
		if _, ok := desiredFields(d); !ok {
			b.Fatal("no field set")
		}
	}
}

// TestDesiredFieldsKeyListsAsTheServerDoes: containers and env items are
// keyed by name, a custom resource's lists are atomic.
func TestDesiredFieldsKeyListsAsTheServerDoes(t *testing.T) {
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "w", "image": "i"}}}}},
	}}
	set, ok := desiredFields(d)
	if !ok || !set.Has(mustPath(t, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"w\"}":{"f:image":{}}}}}}}`)) {
		t.Fatalf("Deployment field set %v (ok %v) lacks containers[name=w].image", set, ok)
	}
	so := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"triggers": []any{map[string]any{"type": "nats-jetstream"}}},
	}}
	set, ok = desiredFields(so)
	if !ok || !set.Has(mustPath(t, `{"f:spec":{"f:triggers":{}}}`)) {
		t.Fatalf("ScaledObject field set %v (ok %v) lacks spec.triggers as one atomic field", set, ok)
	}
}

// mustPath parses the one path a managedFields-style JSON set holds.
func mustPath(t *testing.T, js string) fieldpath.Path {
	t.Helper()
	s := &fieldpath.Set{}
	if err := s.FromJSON(strings.NewReader(js)); err != nil {
		t.Fatal(err)
	}
	var out fieldpath.Path
	s.Leaves().Iterate(func(p fieldpath.Path) { out = p.Copy() })
	return out
}
