package render_test

import (
	"testing"

	"github.com/tinyctl/tinyctl/api/defaults"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// TestContentHashIgnoresRevisionAndClusterName checks the reconciler's skip
// rule: a new revision with the same content keeps every child's content
// hash (so the apply is skipped), and so does the cluster's name (so diff
// from a CLI that does not know it compares content only), while a content
// change alters it.
func TestContentHashIgnoresRevisionAndClusterName(t *testing.T) {
	tc := findCase(t, "scaled-to-zero")
	children := func(c api.Component, rev uint64, cluster ...string) []*unstructured.Unstructured {
		cl := tc.cluster
		if len(cluster) > 0 {
			cl.Name = cluster[0]
		}
		objs, err := render.Render(defaults.Apply(c), rev, cl)
		if err != nil {
			t.Fatal(err)
		}
		out, err := objs.Children()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := children(tc.component, 1)
	sameContent := children(tc.component, 2)
	elsewhere := children(tc.component, 1, "elsewhere")
	changed := tc.component
	changed.Spec.Image = "registry.example.com/acme/extractor:1.0.1"
	newImage := children(changed, 3)

	for i, u := range first {
		kind := u.GetKind()
		h1 := u.GetAnnotations()[render.AnnotationContentHash]
		if h1 == "" {
			t.Fatalf("%s has no %s annotation", kind, render.AnnotationContentHash)
		}
		if h2 := sameContent[i].GetAnnotations()[render.AnnotationContentHash]; h2 != h1 {
			t.Errorf("%s hash changed with the revision alone: %s -> %s", kind, h1, h2)
		}
		if h3 := elsewhere[i].GetAnnotations()[render.AnnotationContentHash]; h3 != h1 {
			t.Errorf("%s hash changed with the cluster name alone: %s -> %s", kind, h1, h3)
		}
		if got := elsewhere[i].GetAnnotations()[render.AnnotationCluster]; got != "elsewhere" {
			t.Errorf("%s cluster annotation = %q, want elsewhere", kind, got)
		}
		if got := sameContent[i].GetAnnotations()[render.AnnotationRevision]; got != "2" {
			t.Errorf("%s revision annotation = %q, want 2", kind, got)
		}
		if kind == "Deployment" && newImage[i].GetAnnotations()[render.AnnotationContentHash] == h1 {
			t.Errorf("Deployment hash unchanged after an image change")
		}
	}
}

// TestPodTemplateIgnoresRevision checks that a revision with the same
// content does not roll the worker's pods: nothing in the pod template
// depends on the revision.
func TestPodTemplateIgnoresRevision(t *testing.T) {
	tc := findCase(t, "fixed-replicas")
	a, err := render.Render(defaults.Apply(tc.component), 1, tc.cluster)
	if err != nil {
		t.Fatal(err)
	}
	b, err := render.Render(defaults.Apply(tc.component), 99, tc.cluster)
	if err != nil {
		t.Fatal(err)
	}
	ha, _ := render.ContentHash(a.Deployment.Spec.Template)
	hb, _ := render.ContentHash(b.Deployment.Spec.Template)
	if ha != hb {
		t.Error("pod template differs between revisions of the same content")
	}
}
