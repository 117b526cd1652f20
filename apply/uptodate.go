package apply

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// upToDate decides whether applying desired would change nothing: the live
// object carries the same content hash and no other manager owns a field
// desired sets (an edit by kubectl or another controller of such a field
// moves its ownership away from tinyctl, so re-applying with force reverts
// it). Managers owning only other fields (labels or annotations added by
// others, the Deployment controller's revision annotation, a restart
// stamp) do not count; see fields.go. It returns the managers that own
// fields desired sets, when the hash matches: the apply takes them back
// (none named when ownership cannot be read, and the apply goes ahead).
func (m *Manager) upToDate(live *metav1.PartialObjectMetadata, desired *unstructured.Unstructured) (bool, []string) {
	want := desired.GetAnnotations()[m.hashAnnotation]
	if want == "" || live.GetAnnotations()[m.hashAnnotation] != want {
		return false, nil
	}
	managers, known := contested(live, desired)
	return known && len(managers) == 0, managers
}
