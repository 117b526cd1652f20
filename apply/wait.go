package apply

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// waitInterval is how often the waits re-read an object.
const waitInterval = 100 * time.Millisecond

// WaitFor polls the object named by gvk, namespace and name until done
// says so (it gets nil for an absent object), for up to timeout. It
// returns the last error of done or the timeout, naming the object.
func (m *Manager) WaitFor(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string,
	timeout time.Duration, done func(*unstructured.Unstructured) (bool, error)) error {
	ref := Result{Kind: gvk.Kind, Namespace: namespace, Name: name}.Ref()
	err := wait.PollUntilContextTimeout(ctx, waitInterval, timeout, true, func(ctx context.Context) (bool, error) {
		live, err := m.Get(ctx, gvk, namespace, name)
		if err != nil {
			return false, err
		}
		return done(live)
	})
	if err != nil {
		return fmt.Errorf("%s: wait: %w", ref, err)
	}
	return nil
}

// WaitEstablished waits until the CustomResourceDefinition name is
// Established, so that objects of its kind can be applied.
func (m *Manager) WaitEstablished(ctx context.Context, name string, timeout time.Duration) error {
	return m.WaitFor(ctx, CRD, "", name, timeout, func(crd *unstructured.Unstructured) (bool, error) {
		return crd != nil && Established(crd), nil
	})
}

// WaitGone waits until the object is deleted.
func (m *Manager) WaitGone(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, timeout time.Duration) error {
	return m.WaitFor(ctx, gvk, namespace, name, timeout, func(live *unstructured.Unstructured) (bool, error) {
		return live == nil, nil
	})
}

// Established reports whether a CustomResourceDefinition has the
// Established condition True. The dynamic client returns unstructured
// objects; apiextensions' apihelpers would need a typed conversion of the
// whole CRD to read one condition.
func Established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
