package apply_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/apply"
)

func TestUnified(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"equal texts give no diff", "a: 1\n", "a: 1\n", ""},
		{"a new object is all additions", "", "a: 1\nb: 2\n", "--- live/X\n+++ desired/X\n@@ -0,0 +1,2 @@\n+a: 1\n+b: 2\n"},
		{"a removed object is all removals", "a: 1\n", "", "--- live/X\n+++ desired/X\n@@ -1 +0,0 @@\n-a: 1\n"},
		{"a change keeps context", "a: 1\nb: 2\nc: 3\n", "a: 1\nb: 5\nc: 3\n",
			"--- live/X\n+++ desired/X\n@@ -1,3 +1,3 @@\n a: 1\n-b: 2\n+b: 5\n c: 3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := apply.Unified("live/X", "desired/X", tt.a, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unified diff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCleanDropsServerManagedFields(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "x", "namespace": "y", "uid": "u", "resourceVersion": "7", "generation": int64(2),
			"creationTimestamp": "2025-01-01T00:00:00Z", "managedFields": []any{}, "labels": map[string]any{"a": "b"},
		},
		"status": map[string]any{"ready": true},
		"data":   map[string]any{"k": "v"},
	}}
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "y", "labels": map[string]any{"a": "b"}},
		"data":     map[string]any{"k": "v"},
	}
	if diff := cmp.Diff(want, apply.Clean(obj)); diff != "" {
		t.Errorf("clean (-want +got):\n%s", diff)
	}
	if _, ok := obj.Object["status"]; !ok {
		t.Error("Clean changed its argument")
	}
}
