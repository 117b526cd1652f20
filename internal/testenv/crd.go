package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ApplyCRD server-side applies a CustomResourceDefinition given as YAML and
// waits until the API server reports it Established.
func (k *Kube) ApplyCRD(tb testing.TB, manifest []byte) {
	tb.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(manifest, &obj); err != nil {
		tb.Fatalf("crd yaml: %v", err)
	}
	crd := &unstructured.Unstructured{Object: obj}
	dc, _ := k.Dynamic(tb)
	_, err := dc.Resource(crdResource).Apply(context.Background(), crd.GetName(), crd,
		metav1.ApplyOptions{FieldManager: "testenv", Force: true})
	if err != nil {
		tb.Fatalf("apply crd %s: %v", crd.GetName(), err)
	}
	Eventually(tb, 30*time.Second, func() error { return established(dc, crd.GetName()) })
}

// DeleteCRD deletes a CustomResourceDefinition by name and waits until it
// is gone.
func (k *Kube) DeleteCRD(tb testing.TB, name string) {
	tb.Helper()
	dc, _ := k.Dynamic(tb)
	if err := dc.Resource(crdResource).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		tb.Fatalf("delete crd %s: %v", name, err)
	}
	Eventually(tb, 60*time.Second, func() error {
		if _, err := dc.Resource(crdResource).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("crd %s still present", name)
		}
		return nil
	})
}

func established(dc dynamic.Interface, name string) error {
	got, err := dc.Resource(crdResource).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return nil
		}
	}
	return fmt.Errorf("crd %s not established yet", name)
}
