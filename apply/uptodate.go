package apply

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// upToDate decides whether applying desired would change nothing: the live
// object carries the same content hash and no other manager has written
// fields of the main resource since (an edit by kubectl or another
// controller moves field ownership away from tinyctl, so re-applying with
// force reverts it). Status writes never count; scale writes count only when
// tinyctl owns spec.replicas.
func (m *Manager) upToDate(live *metav1.PartialObjectMetadata, desired *unstructured.Unstructured) bool {
	want := desired.GetAnnotations()[m.hashAnnotation]
	if want == "" || live.GetAnnotations()[m.hashAnnotation] != want {
		return false
	}
	_, ownsReplicas, _ := unstructured.NestedFieldNoCopy(desired.Object, "spec", "replicas")
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == FieldManager {
			continue
		}
		switch mf.Subresource {
		case "status":
			continue
		case "scale":
			if !ownsReplicas {
				continue
			}
		}
		return false
	}
	return true
}
