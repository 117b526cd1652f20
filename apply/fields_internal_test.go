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

// TestMetadataOwnerAgreesWithTheSchema: for a manager owning only labels
// and annotations, the schema-free answer is the schema's, and it is given
// for the Deployment controller's revision annotation (so no converter is
// built for it); any other field is left to the schema.
func TestMetadataOwnerAgreesWithTheSchema(t *testing.T) {
	meta := func(labels, annotations map[string]any) *unstructured.Unstructured {
		m := map[string]any{"name": "w", "namespace": "ns"}
		if labels != nil {
			m["labels"] = labels
		}
		if annotations != nil {
			m["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": m,
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "w", "image": "i"}}}}}}}
	}
	desired := []*unstructured.Unstructured{
		meta(map[string]any{"app": "w"}, map[string]any{"tinyctl.io/hash": "h"}),
		meta(nil, map[string]any{"tinyctl.io/hash": "h"}),
		meta(map[string]any{}, nil),
	}
	owners := []struct {
		json      string
		wantKnown bool
	}{
		{`{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}}}`, true},
		{`{"f:metadata":{"f:annotations":{"f:tinyctl.io/hash":{}}}}`, true},
		{`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`, true},
		{`{"f:metadata":{"f:labels":{".":{},"f:team":{}}}}`, true},
		{`{"f:metadata":{"f:finalizers":{}}}`, false},
		{`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"w\"}":{"f:image":{}}}}}}}`, false},
		{`{"f:metadata":{"f:labels":{"f:team":{}}},"f:spec":{"f:paused":{}}}`, false},
	}
	compared := 0
	for _, d := range desired {
		want, ok := desiredFields(d)
		if !ok {
			t.Fatal("no field set")
		}
		for _, o := range owners {
			owned := &fieldpath.Set{}
			if err := owned.FromJSON(strings.NewReader(o.json)); err != nil {
				t.Fatal(err)
			}
			takes, known := metadataOwner(owned, d.GetLabels(), d.GetAnnotations())
			if d.GetLabels() == nil || len(d.GetLabels()) > 0 {
				if known != o.wantKnown {
					t.Errorf("%s on %v: known = %v, want %v", o.json, d.Object["metadata"], known, o.wantKnown)
				}
			}
			if !known {
				continue
			}
			compared++
			if schema := !owned.Intersection(want).Empty(); takes != schema {
				t.Errorf("%s on %v: takes = %v, the schema says %v", o.json, d.Object["metadata"], takes, schema)
			}
		}
	}
	if compared < 10 {
		t.Fatalf("compared %d answers with the schema's, want at least 10", compared)
	}
}
