package reconcile

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api"
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
	m := got.(*cachedChild)
	if m.name != "thumbs" || m.namespace != "media" || m.uid != "u1" || m.resourceVersion != "42" || m.generation != 3 {
		t.Errorf("identity not kept: %+v", m)
	}
	if acc, err := meta.Accessor(m); err != nil || acc.GetName() != "thumbs" || acc.GetNamespace() != "media" || acc.GetResourceVersion() != "42" {
		t.Errorf("the informer cannot read the child's identity: %v, %v", acc, err)
	}
	live := m.live()
	if live.Labels[render.LabelName] != "thumbs" || live.Annotations[render.AnnotationContentHash] != "abc" ||
		live.Name != "thumbs" || live.UID != "u1" || live.ResourceVersion != "42" || live.Generation != 3 {
		t.Errorf("the metadata apply reads: labels %v, annotations %v, %+v", live.Labels, live.Annotations, live.ObjectMeta)
	}
	if key, ok := m.key(); !ok || key != api.Key("media", "thumbs") {
		t.Errorf("component key %q, %v; want media.thumbs", key, ok)
	}
	if len(live.ManagedFields) != 2 {
		t.Fatalf("managed fields %+v: want tinyctl's and kubectl-label's, not the status entry", live.ManagedFields)
	}
	own, other := live.ManagedFields[0], live.ManagedFields[1]
	if own.Manager != apply.FieldManager || own.FieldsV1 != nil || other.FieldsV1 != set || other.Manager != "kubectl-label" || other.FieldsType != "FieldsV1" {
		t.Errorf("tinyctl's set kept (%+v) or another manager's dropped (%+v)", own, other)
	}
	if other.Time != nil || other.Operation != "" || !live.CreationTimestamp.IsZero() || live.APIVersion != "" {
		t.Errorf("fields nobody reads kept: %+v", live)
	}
}

// A change to any label or annotation by someone else wakes the loop; the
// Deployment controller's revision annotation and the order of a map's
// entries do not.
func TestChangedByAnyoneSeesEveryLabelAndAnnotation(t *testing.T) {
	child := func(labels, annotations map[string]string) any {
		return keptChild(metav1.ObjectMeta{Name: "thumbs", Namespace: "media", Generation: 1, Labels: labels, Annotations: annotations})
	}
	base := map[string]string{render.LabelName: "thumbs", "team": "a", "tier": "batch"}
	ann := map[string]string{render.AnnotationContentHash: "abc"}
	tests := []struct {
		name                string
		labels, annotations map[string]string
		changed             bool
	}{
		{"the same entries", map[string]string{"tier": "batch", "team": "a", render.LabelName: "thumbs"}, ann, false},
		{"the revision annotation", base, map[string]string{render.AnnotationContentHash: "abc", deploymentRevision: "2"}, false},
		{"a label's value", map[string]string{render.LabelName: "thumbs", "team": "b", "tier": "batch"}, ann, true},
		{"a label added", map[string]string{render.LabelName: "thumbs", "team": "a", "tier": "batch", "x": ""}, ann, true},
		{"a label removed", map[string]string{render.LabelName: "thumbs", "team": "a"}, ann, true},
		{"keys and values swapped", map[string]string{render.LabelName: "thumbs", "a": "team", "tier": "batch"}, ann, true},
		{"an annotation added", base, map[string]string{render.AnnotationContentHash: "abc", "note": "x"}, true},
		{"the hash", base, map[string]string{render.AnnotationContentHash: "abd"}, true},
	}
	old := child(base, ann)
	for _, tt := range tests {
		if got := changedByAnyone(old, child(tt.labels, tt.annotations)); got != tt.changed {
			t.Errorf("%s: changed = %v, want %v", tt.name, got, tt.changed)
		}
	}
}
