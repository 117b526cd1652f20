package preview

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ContextLines is how many unchanged lines surround each change of a diff.
const ContextLines = 3

// serverFields are the metadata fields the API server manages; they are
// left out of every comparison.
var serverFields = []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"}

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

// diffObjects returns the unified diff from live to desired (either may be
// nil), as YAML, with file names live/REF and desired/REF.
func diffObjects(ref string, live, desired *unstructured.Unstructured) (string, error) {
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

// Unified returns the unified diff of two texts, with ContextLines of
// context, or "" when they are equal.
func Unified(fromName, toName, a, b string) (string, error) {
	if a == b {
		return "", nil
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(a), B: lines(b),
		FromFile: fromName, ToFile: toName, Context: ContextLines,
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
