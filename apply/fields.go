package apply

import (
	"bytes"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Field ownership decides whether another manager's write matters. The
// API server records, per manager, the set of field paths it last wrote
// (metadata.managedFields), with list items keyed as the type's schema
// keys them (containers by name, env by name). tinyctl's apply must win
// back a field it sets that someone else now owns (kubectl edit changed
// the image); a manager owning only fields tinyctl never sets (kubectl
// label, kubectl rollout restart, the Deployment controller's revision
// annotation, a GitOps tool's annotation) changes nothing tinyctl wants.

var (
	// builtinFields knows the schema of every built-in kind (lists keyed
	// as the server keys them).
	builtinFields = applyconfigurations.NewTypeConverter(scheme.Scheme)
	// deducedFields reads any object with every list atomic: the paths a
	// custom resource's server-side schema gives its fields when its lists
	// are not declared associative, as tinyctl's (KEDA's) are not.
	deducedFields = managedfields.NewDeducedTypeConverter()
)

// desiredFields returns the field paths desired sets. ok is false when
// they cannot be told (the object does not fit its kind's schema).
func desiredFields(desired *unstructured.Unstructured) (*fieldpath.Set, bool) {
	conv := builtinFields
	if !scheme.Scheme.Recognizes(desired.GroupVersionKind()) {
		conv = deducedFields
	}
	typed, err := conv.ObjectToTyped(desired)
	if err != nil {
		return nil, false
	}
	set, err := typed.ToFieldSet()
	if err != nil {
		return nil, false
	}
	return set, true
}

// contested returns the other managers of live's main resource that own a
// field desired sets (sorted), and whether that could be told at all.
// Status writes never count; scale writes count only when desired sets
// spec.replicas.
func contested(live *metav1.PartialObjectMetadata, desired *unstructured.Unstructured) ([]string, bool) {
	var want *fieldpath.Set
	var managers []string
	_, setsReplicas, _ := unstructured.NestedFieldNoCopy(desired.Object, "spec", "replicas")
	for _, mf := range live.GetManagedFields() {
		switch {
		case mf.Manager == FieldManager, mf.Subresource == "status", mf.Subresource == "scale" && !setsReplicas:
			continue
		case mf.FieldsV1 == nil:
			return nil, false // a set not kept (a cache dropping them): cannot tell
		}
		if want == nil {
			var ok bool
			if want, ok = desiredFields(desired); !ok {
				return nil, false
			}
		}
		owned := &fieldpath.Set{}
		if err := owned.FromJSON(bytes.NewReader(mf.FieldsV1.GetRawBytes())); err != nil {
			return nil, false
		}
		if !owned.Intersection(want).Empty() && !slices.Contains(managers, mf.Manager) {
			managers = append(managers, mf.Manager)
		}
	}
	slices.Sort(managers)
	return managers, true
}
