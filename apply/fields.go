package apply

import (
	"bytes"
	"slices"
	"sync"

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
	// as the server keys them). It is built when first needed: building it
	// takes about 0.1 s and 22 MB of garbage, which every command would
	// pay at start, and a manager owning only labels and annotations (the
	// Deployment controller's revision) does not need it (metadataOwner).
	builtinFields = sync.OnceValue(func() managedfields.TypeConverter {
		return applyconfigurations.NewTypeConverter(scheme.Scheme)
	})
	// deducedFields reads any object with every list atomic: the paths a
	// custom resource's server-side schema gives its fields when its lists
	// are not declared associative, as tinyctl's (KEDA's) are not.
	deducedFields = managedfields.NewDeducedTypeConverter()
)

// desiredFields returns the field paths desired sets. ok is false when
// they cannot be told (the object does not fit its kind's schema).
func desiredFields(desired *unstructured.Unstructured) (*fieldpath.Set, bool) {
	conv := deducedFields
	if scheme.Scheme.Recognizes(desired.GroupVersionKind()) {
		conv = builtinFields()
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
	labels, annotations := desired.GetLabels(), desired.GetAnnotations() // copies: once, not per manager
	_, setsReplicas, _ := unstructured.NestedFieldNoCopy(desired.Object, "spec", "replicas")
	for _, mf := range live.GetManagedFields() {
		switch {
		case mf.Manager == FieldManager, mf.Subresource == "status", mf.Subresource == "scale" && !setsReplicas:
			continue
		case mf.FieldsV1 == nil:
			return nil, false // a set not kept (a cache dropping them): cannot tell
		}
		owned := &fieldpath.Set{}
		if err := owned.FromJSON(bytes.NewReader(mf.FieldsV1.GetRawBytes())); err != nil {
			return nil, false
		}
		takes, known := metadataOwner(owned, labels, annotations)
		if !known {
			if want == nil {
				var ok bool
				if want, ok = desiredFields(desired); !ok {
					return nil, false
				}
			}
			takes = !owned.Intersection(want).Empty()
		}
		if takes && !slices.Contains(managers, mf.Manager) {
			managers = append(managers, mf.Manager)
		}
	}
	slices.Sort(managers)
	return managers, true
}

// metadataOwner tells without a schema whether a manager owning owned takes
// a field desired sets (desired's labels and annotations given), when owned holds only labels and annotations (maps,
// which every schema reads alike). known is false for any other field, and
// when desired has an empty map that owned holds the whole of: the schema
// answers those.
func metadataOwner(owned *fieldpath.Set, labels, annotations map[string]string) (takes, known bool) {
	known = true
	owned.Iterate(func(p fieldpath.Path) {
		if !known {
			return
		}
		if len(p) < 2 || len(p) > 3 || !isField(p[0], "metadata") || p[1].FieldName == nil {
			known = false
			return
		}
		var m map[string]string
		isMap := true
		switch *p[1].FieldName {
		case "labels":
			m = labels
		case "annotations":
			m = annotations
		default:
			isMap = false
		}
		switch {
		case !isMap:
			known = false
		case len(p) == 2: // the map itself ("." in managedFields)
			known = m == nil || len(m) > 0
		case p[2].FieldName == nil:
			known = false
		default:
			_, set := m[*p[2].FieldName]
			takes = takes || set
		}
	})
	return takes, known
}

// isField reports whether pe is the field called name.
func isField(pe fieldpath.PathElement, name string) bool {
	return pe.FieldName != nil && *pe.FieldName == name
}
