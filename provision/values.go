package provision

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// mergeValues returns base with over laid on top: maps merge key by key,
// anything else in over replaces base. Neither input is modified. Not
// Helm's chartutil.CoalesceTables, which modifies both tables, deletes a
// key set to null, and only logs a map meeting a scalar.
func mergeValues(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			out[k] = mergeValues(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

// nested returns values[path...] and whether it is set.
func nested(values map[string]any, path ...string) (any, bool) {
	v, ok, err := unstructured.NestedFieldNoCopy(values, path...)
	return v, ok && err == nil
}

// nestedString returns values[path...] as a string, def when unset, and
// an error when it is set to something else (unstructured.NestedString
// fails on a null, which Helm values may hold for "unset").
func nestedString(values map[string]any, def string, path ...string) (string, error) {
	v, ok := nested(values, path...)
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("value %v: want a string, got %T", path, v)
	}
	return s, nil
}

// nestedInt returns values[path...] as an int, def when unset, and an
// error when it is set to something other than a whole number (values
// from YAML or JSON arrive as int, int64 or float64, where
// unstructured.NestedInt64 takes only int64).
func nestedInt(values map[string]any, def int, path ...string) (int, error) {
	v, ok := nested(values, path...)
	if !ok || v == nil {
		return def, nil
	}
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		if n == float64(int(n)) {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("value %v: want a whole number, got %v", path, v)
}
