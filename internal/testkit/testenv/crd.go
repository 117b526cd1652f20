package testenv

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/render"
)

// Manager returns an admin apply.Manager, the one write path the tests use
// too.
func (k *Kube) Manager(tb testing.TB) *apply.Manager {
	tb.Helper()
	m, err := apply.New(k.Config, render.AnnotationContentHash)
	if err != nil {
		tb.Fatalf("apply manager: %v", err)
	}
	return m
}

// ApplyCRD server-side applies a CustomResourceDefinition given as YAML and
// waits until the API server reports it Established.
func (k *Kube) ApplyCRD(tb testing.TB, manifest []byte) {
	tb.Helper()
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(manifest, &crd.Object); err != nil {
		tb.Fatalf("crd yaml: %v", err)
	}
	m := k.Manager(tb)
	ctx := context.Background()
	if _, err := m.Apply(ctx, crd); err != nil {
		tb.Fatalf("apply crd: %v", err)
	}
	if err := m.WaitEstablished(ctx, crd.GetName(), 30*time.Second); err != nil {
		tb.Fatal(err)
	}
}

// DeleteCRD deletes a CustomResourceDefinition by name and waits until it
// is gone.
func (k *Kube) DeleteCRD(tb testing.TB, name string) {
	tb.Helper()
	m := k.Manager(tb)
	ctx := context.Background()
	if _, err := m.Delete(ctx, apply.CRD, "", name); err != nil {
		tb.Fatalf("delete crd: %v", err)
	}
	if err := m.WaitGone(ctx, apply.CRD, "", name, 60*time.Second); err != nil {
		tb.Fatal(err)
	}
}
