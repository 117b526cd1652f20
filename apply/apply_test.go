package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/deploy"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

var kube *testenv.Kube

func TestMain(m *testing.M) { testenv.RunWithKube(m, &kube) }

const hashKey = "tinyctl.io/content-hash"

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func configMap(ns, name, value, hash string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name": name, "namespace": ns,
			"annotations": map[string]any{hashKey: hash},
		},
		"data": map[string]any{"value": value},
	}}
}

func newApplier(t *testing.T) *apply.Manager {
	t.Helper()
	a, err := apply.New(kube.Config, hashKey)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustApply(t *testing.T, a *apply.Manager, obj *unstructured.Unstructured, want action.Action, opts ...apply.Option) {
	t.Helper()
	res, err := a.Apply(context.Background(), obj, opts...)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if res.Action != want {
		t.Fatalf("apply %s: action %s, want %s", res.Ref(), res.Action, want)
	}
}

func TestApplyCreatesThenSkipsThenConfigures(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	mark := kube.AuditMark(t)

	mustApply(t, a, configMap(ns, "cm", "one", "h1"), action.Created)
	mustApply(t, a, configMap(ns, "cm", "one", "h1"), action.Unchanged)
	mustApply(t, a, configMap(ns, "cm", "two", "h2"), action.Configured)

	writes := kube.Writes(t, mark, func(e testenv.AuditEvent) bool { return e.ObjectRef.Namespace == ns })
	if len(writes) != 2 {
		t.Fatalf("want 2 writes (create, change), the audit log has %d: %+v", len(writes), writes)
	}
}

func TestApplyRevertsAnEditByAnotherManager(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	mustApply(t, a, configMap(ns, "cm", "mine", "h1"), action.Created)

	dc, _ := kube.Dynamic(t)
	live, err := dc.Resource(configMaps).Namespace(ns).Get(context.Background(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(live.Object, "theirs", "data", "value")
	if _, err := dc.Resource(configMaps).Namespace(ns).Update(context.Background(), live, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}

	mustApply(t, a, configMap(ns, "cm", "mine", "h1"), action.Configured)
	got, err := dc.Resource(configMaps).Namespace(ns).Get(context.Background(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "value"); v != "mine" {
		t.Fatalf("data.value = %q after re-apply, want %q", v, "mine")
	}
}

func TestDeleteReportsAbsentObjects(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	mustApply(t, a, configMap(ns, "cm", "x", "h"), action.Created)

	for _, want := range []action.Action{action.Deleted, action.Absent} {
		res, err := a.Delete(context.Background(), gvk, ns, "cm")
		if err != nil || res.Action != want {
			t.Fatalf("delete: %v %v, want %s", res, err, want)
		}
	}
}

func scaledObject(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1",
		"kind":       "ScaledObject",
		"metadata":   map[string]any{"name": "so", "namespace": ns},
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"name": "worker"},
			"triggers":       []any{map[string]any{"type": "cpu", "metadata": map[string]any{"value": "50"}}},
		},
	}}
}

func TestUnknownKindWaitsUntilTheCRDAppears(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)

	_, err := a.Apply(context.Background(), scaledObject(ns))
	if !errors.Is(err, apply.ErrKindNotInstalled) {
		t.Fatalf("apply before CRD: err = %v, want ErrKindNotInstalled", err)
	}
	if !strings.Contains(err.Error(), "ScaledObject/"+ns+"/so apply failed") {
		t.Fatalf("error does not name the object: %v", err)
	}

	kube.ApplyCRD(t, deploy.ScaledObjectCRD)
	t.Cleanup(func() { kube.DeleteCRD(t, "scaledobjects.keda.sh") })
	mustApply(t, a, scaledObject(ns), action.Created)
}

func TestInvalidObjectIsPermanent(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	bad := configMap(ns, "Not_A_Name", "x", "h")
	_, err := a.Apply(context.Background(), bad)
	if !apply.IsPermanent(err) {
		t.Fatalf("invalid name: err = %v, want a permanent error", err)
	}
}

func TestKnownLiveSkipsTheRead(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	// The caller's cache says the object exists with the desired hash: Apply
	// trusts it and neither reads nor writes (the object does not even exist).
	cached := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "cm", Namespace: ns, Annotations: map[string]string{hashKey: "h1"}}}
	res, err := a.Apply(context.Background(), configMap(ns, "cm", "one", "h1"), apply.KnownLive(cached))
	if err != nil || res.Action != action.Unchanged {
		t.Fatalf("apply with a matching cached object: %v %v, want unchanged", res, err)
	}
	// A cached object with another hash is applied.
	cached.Annotations[hashKey] = "old"
	mustApply(t, a, configMap(ns, "cm", "one", "h1"), action.Configured, apply.KnownLive(cached))
}
