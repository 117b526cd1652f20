package apply

import (
	"context"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// DiffContextLines is how many unchanged lines surround each change of a
// diff.
const DiffContextLines = 3

// serverFields are the metadata fields the API server manages; they are
// left out of every comparison.
var serverFields = []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"}

// DryRun server-side applies obj without persisting it and returns what
// the API server would store.
func (m *Manager) DryRun(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	res := resultFor(obj)
	mapping, err := m.Resource(obj.GroupVersionKind())
	if err != nil {
		return nil, fmt.Errorf("%s dry-run failed: %w", res.Ref(), err)
	}
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true, DryRun: []string{metav1.DryRunAll}}
	out, err := m.client(mapping, obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, opts)
	if err != nil {
		return nil, fmt.Errorf("%s dry-run failed: %w", res.Ref(), err)
	}
	return out, nil
}

// Get reads the live object named by gvk, namespace and name, or returns
// nil when it does not exist.
func (m *Manager) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	mapping, err := m.Resource(gvk)
	if err != nil {
		return nil, err
	}
	u, err := m.client(mapping, namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s/%s/%s read live: %w", gvk.Kind, namespace, name, err)
	}
	return u, nil
}

// Diff dry-runs obj and returns the unified diff, as YAML, from the live
// object (absent counts as empty) to what the API server would store, ""
// when they are equal. The live object's and the desired object's values
// of the carry annotations are taken from the live one first, so that
// only content differences show (a revision annotation, say); the fencing
// token a controller stamped (AnnotationFence) always is.
func (m *Manager) Diff(ctx context.Context, obj *unstructured.Unstructured, carry ...string) (string, error) {
	live, err := m.Get(ctx, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
	if err != nil {
		return "", err
	}
	merged, err := m.DryRun(ctx, withAnnotationsOf(obj, live, append(carry[:len(carry):len(carry)], AnnotationFence)))
	if err != nil {
		return "", err
	}
	return DiffObjects(resultFor(obj).Ref(), live, merged)
}

func withAnnotationsOf(obj, live *unstructured.Unstructured, keys []string) *unstructured.Unstructured {
	out := obj.DeepCopy()
	if live == nil {
		return out
	}
	ann := out.GetAnnotations()
	for _, k := range keys {
		if v, ok := live.GetAnnotations()[k]; ok {
			if ann == nil {
				ann = map[string]string{}
			}
			ann[k] = v
		}
	}
	out.SetAnnotations(ann)
	return out
}

// Clean returns a copy of obj's content without status and the metadata
// fields the API server manages, or nil for a nil obj.
func Clean(obj *unstructured.Unstructured) map[string]any {
	if obj == nil {
		return nil
	}
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "status")
	for _, f := range serverFields {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	return c.Object
}

// DiffObjects returns the unified diff from live to desired (either may be
// nil), as YAML without server-managed fields, with file names live/REF
// and desired/REF.
func DiffObjects(ref string, live, desired *unstructured.Unstructured) (string, error) {
	a, err := toYAML(Clean(live))
	if err != nil {
		return "", err
	}
	b, err := toYAML(Clean(desired))
	if err != nil {
		return "", err
	}
	return Unified("live/"+ref, "desired/"+ref, a, b)
}

func toYAML(obj map[string]any) (string, error) {
	if obj == nil {
		return "", nil
	}
	b, err := yaml.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("object to yaml: %w", err)
	}
	return string(b), nil
}

// Unified returns the unified diff of two texts, with DiffContextLines of
// context, or "" when they are equal.
func Unified(fromName, toName, a, b string) (string, error) {
	if a == b {
		return "", nil
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(a), B: lines(b),
		FromFile: fromName, ToFile: toName, Context: DiffContextLines,
	})
	if err != nil {
		return "", fmt.Errorf("diff %s: %w", toName, err)
	}
	return d, nil
}

// lines splits text into lines that keep their newline; empty text has
// none.
func lines(text string) []string {
	if text == "" {
		return nil
	}
	return difflib.SplitLines(strings.TrimSuffix(text, "\n"))
}
