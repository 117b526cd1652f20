package reconcile

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/render"
)

// The cache keeps of a child what the loop reads, and another manager's
// field set, which apply's up-to-date check needs; tinyctl's own set and
// the status entries go.
func TestTrimChildKeepsWhatTheLoopReads(t *testing.T) {
	set := metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:team":{}}}}`)
	now := metav1.Now()
	in := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: metav1.ObjectMeta{Name: "thumbs", Namespace: "media", UID: "u1", ResourceVersion: "42", Generation: 3,
			CreationTimestamp: now,
			Labels:            map[string]string{render.LabelManagedBy: render.ManagedByValue, render.LabelName: "thumbs", "team": "a"},
			Annotations:       map[string]string{render.AnnotationContentHash: "abc"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: apply.FieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: set, Time: &now},
				{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: set, Time: &now},
				{Manager: "kube-controller-manager", Subresource: "status", FieldsType: "FieldsV1", FieldsV1: set},
			}}}
	got, err := trimChild(in)
	if err != nil {
		t.Fatal(err)
	}
	m := got.(*metav1.PartialObjectMetadata)
	if m.Name != "thumbs" || m.Namespace != "media" || m.UID != "u1" || m.ResourceVersion != "42" || m.Generation != 3 {
		t.Errorf("identity not kept: %+v", m.ObjectMeta)
	}
	if m.Labels["team"] != "a" || m.Labels[render.LabelName] != "thumbs" || m.Annotations[render.AnnotationContentHash] != "abc" {
		t.Errorf("labels %v, annotations %v", m.Labels, m.Annotations)
	}
	if len(m.ManagedFields) != 2 {
		t.Fatalf("managed fields %+v: want tinyctl's and kubectl-label's, not the status entry", m.ManagedFields)
	}
	if own, other := m.ManagedFields[0], m.ManagedFields[1]; own.FieldsV1 != nil || other.FieldsV1 != set || other.Manager != "kubectl-label" {
		t.Errorf("tinyctl's set kept (%v) or another manager's dropped (%+v)", own.FieldsV1, other)
	}
	if m.ManagedFields[1].Time != nil || !m.CreationTimestamp.IsZero() || m.APIVersion != "" {
		t.Errorf("fields nobody reads kept: %+v", m)
	}
}
