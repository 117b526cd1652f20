package apply_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/deploy"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

var configMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

const owner = "tinyctl.io/component"

func labelled(obj *unstructured.Unstructured, value string) *unstructured.Unstructured {
	obj.SetLabels(map[string]string{owner: value})
	return obj
}

func TestOwnedNeverTakesOverOrDeletesSomeoneElsesObject(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	ctx := context.Background()
	mustApply(t, a, configMap(ns, "theirs", "original", "h0"), action.Created) // made without the label
	mustApply(t, a, labelled(configMap(ns, "other", "original", "h0"), "ns.other"), action.Created)
	mark := kube.AuditMark(t)

	for _, name := range []string{"theirs", "other"} {
		res, err := a.Apply(ctx, labelled(configMap(ns, name, "mine", "h1"), "ns.me"), apply.Owned(owner, "ns.me"))
		if !errors.Is(err, apply.ErrNotOwned) || res.Action != action.Skipped {
			t.Fatalf("apply over %s: %v %v, want skipped with ErrNotOwned", name, res, err)
		}
		res, err = a.Delete(ctx, configMapKind, ns, name, apply.Owned(owner, "ns.me"))
		if !errors.Is(err, apply.ErrNotOwned) || res.Action != action.Skipped {
			t.Fatalf("delete of %s: %v %v, want skipped with ErrNotOwned", name, res, err)
		}
	}
	if w := kube.Writes(t, mark, func(e testenv.AuditEvent) bool { return e.ObjectRef.Namespace == ns }); len(w) != 0 {
		t.Fatalf("refused applies and deletes wrote %d times: %+v", len(w), w)
	}

	mustApply(t, a, labelled(configMap(ns, "mine", "v1", "h1"), "ns.me"), action.Created, apply.Owned(owner, "ns.me"))
	mustApply(t, a, labelled(configMap(ns, "mine", "v2", "h2"), "ns.me"), action.Configured, apply.Owned(owner, "ns.me"))
	if res, err := a.Delete(ctx, configMapKind, ns, "mine", apply.Owned(owner, "ns.me")); err != nil || res.Action != action.Deleted {
		t.Fatalf("delete of an owned object: %v %v", res, err)
	}
	if res, err := a.Delete(ctx, configMapKind, ns, "mine", apply.Owned(owner, "ns.me")); err != nil || res.Action != action.Absent {
		t.Fatalf("second delete: %v %v, want absent", res, err)
	}
}

func TestApplyAllAppliesInOrderAndWaitsOnlyForMissingKinds(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	objs := []*unstructured.Unstructured{configMap(ns, "first", "1", "h1"), scaledObject(ns), configMap(ns, "last", "2", "h2")}
	cs, err := a.ApplyAll(context.Background(), objs, apply.SetOptions{})
	if !errors.Is(err, apply.ErrKindNotInstalled) {
		t.Fatalf("ApplyAll without the CRD: %v, want ErrKindNotInstalled after the rest", err)
	}
	if len(cs) != 2 || cs[0].Name != "first" || cs[1].Name != "last" || !cs.Wrote() {
		t.Fatalf("change set %v, want first and last created", cs)
	}
	objs[2] = configMap(ns, "Bad_Name", "x", "h")
	cs, err = a.ApplyAll(context.Background(), []*unstructured.Unstructured{objs[0], objs[2], configMap(ns, "never", "x", "h")}, apply.SetOptions{})
	if !apply.IsPermanent(err) || len(cs) != 2 || cs[1].Action != action.Failed {
		t.Fatalf("ApplyAll with an invalid object: %v %v, want it to stop there, failed", cs, err)
	}
}

func TestCreateNeverTouchesAnExistingObject(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	mustApply(t, a, configMap(ns, "cm", "theirs", "h0"), action.Created)
	mark := kube.AuditMark(t)
	_, res, err := a.Create(context.Background(), configMap(ns, "cm", "mine", "h1"))
	if err != nil || res.Action != action.Unchanged {
		t.Fatalf("create over an existing object: %v %v, want unchanged", res, err)
	}
	if w := kube.Writes(t, mark, func(e testenv.AuditEvent) bool {
		return e.ObjectRef.Namespace == ns && e.ResponseStatus.Code < 300
	}); len(w) != 0 {
		t.Fatalf("create over an existing object wrote: %+v", w)
	}
	gen := configMap(ns, "", "x", "h")
	gen.SetGenerateName("gen-")
	got, res, err := a.Create(context.Background(), gen)
	if err != nil || res.Action != action.Created || got == nil || got.GetName() == "" || res.Name != got.GetName() {
		t.Fatalf("create with generateName: %v %v %v", got, res, err)
	}
}

func TestWaitEstablishedAndGone(t *testing.T) {
	a := newApplier(t)
	ctx := context.Background()
	kube.ApplyCRD(t, deploy.ScaledObjectCRD) // waits through apply.WaitEstablished
	if err := a.WaitEstablished(ctx, "scaledobjects.keda.sh", time.Second); err != nil {
		t.Fatalf("an established CRD: %v", err)
	}
	if err := a.WaitEstablished(ctx, "nothings.example.com", 300*time.Millisecond); err == nil {
		t.Fatal("waiting for a CRD that does not exist returned no error")
	}
	kube.DeleteCRD(t, "scaledobjects.keda.sh") // waits through apply.WaitGone
	if live, err := a.Get(ctx, apply.CRD, "", "scaledobjects.keda.sh"); err != nil || live != nil {
		t.Fatalf("CRD after WaitGone: %v %v", live, err)
	}
}

func TestDiffShowsOnlyWhatWouldChange(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	ctx := context.Background()
	if d, err := a.Diff(ctx, configMap(ns, "cm", "one", "h1")); err != nil || d == "" {
		t.Fatalf("diff of a new object: %q %v, want all of it", d, err)
	}
	mustApply(t, a, configMap(ns, "cm", "one", "h1"), action.Created)
	if d, err := a.Diff(ctx, configMap(ns, "cm", "one", "h1")); err != nil || d != "" {
		t.Fatalf("diff of an unchanged object: %q %v, want none", d, err)
	}
	d, err := a.Diff(ctx, configMap(ns, "cm", "two", "h2"))
	if err != nil || d == "" {
		t.Fatalf("diff of a changed object: %q %v", d, err)
	}
	for _, line := range []string{"-  value: one", "+  value: two"} {
		if !strings.Contains(d, line) {
			t.Errorf("diff lacks %q:\n%s", line, d)
		}
	}
}

// TestPrefetchReadsWhatTheCacheLacksAndApplyAllTrustsIt: the prefetched
// answers say absent, someone else's or ours, and ApplyAll acts on them as
// on a read of its own: creates, configures, and refuses the object it
// does not own.
func TestPrefetchReadsWhatTheCacheLacksAndApplyAllTrustsIt(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	ctx := context.Background()
	mustApply(t, a, configMap(ns, "theirs", "original", "h0"), action.Created)
	mustApply(t, a, labelled(configMap(ns, "mine", "v1", "h1"), "ns.me"), action.Created)
	cached := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "cached", Namespace: ns,
		Labels: map[string]string{owner: "ns.me"}, Annotations: map[string]string{hashKey: "h2"}}}
	known := func(obj *unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool) {
		if obj.GetName() == "cached" {
			return cached, true
		}
		return nil, false
	}
	objs := []*unstructured.Unstructured{
		labelled(configMap(ns, "new", "v2", "h2"), "ns.me"),
		labelled(configMap(ns, "mine", "v2", "h2"), "ns.me"),
		labelled(configMap(ns, "cached", "v2", "h2"), "ns.me"), // the cache says up to date (it does not exist)
		labelled(configMap(ns, "theirs", "v2", "h2"), "ns.me"),
	}
	live := a.Prefetch(ctx, objs, known)
	for _, tc := range []struct {
		name, wantLabel string
		wantNil         bool
	}{{"new", "", true}, {"mine", "ns.me", false}, {"cached", "ns.me", false}, {"theirs", "", false}} {
		m, ok := live(objByName(objs, tc.name))
		if !ok || (m == nil) != tc.wantNil || (m != nil && m.Labels[owner] != tc.wantLabel) {
			t.Fatalf("prefetched %s: %v %v, want nil %v, label %q", tc.name, m, ok, tc.wantNil, tc.wantLabel)
		}
	}
	cs, err := a.ApplyAll(ctx, objs, apply.SetOptions{Live: live, Options: []apply.Option{apply.Owned(owner, "ns.me")}})
	var got []action.Action
	for _, r := range cs {
		got = append(got, r.Action)
	}
	want := []action.Action{action.Created, action.Configured, action.Unchanged, action.Skipped}
	if !errors.Is(err, apply.ErrNotOwned) || !slices.Equal(got, want) {
		t.Fatalf("ApplyAll: %v, %v; want %v and ErrNotOwned", got, err, want)
	}
}

func objByName(objs []*unstructured.Unstructured, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetName() == name {
			return o
		}
	}
	return nil
}

// TestAnObjectCreatedAfterItWasReadAsAbsentIsNotTakenOver: the read said
// absent, someone else then created the object; the apply meets a
// conflict, reads again and refuses it, leaving it as it was.
func TestAnObjectCreatedAfterItWasReadAsAbsentIsNotTakenOver(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	ctx := context.Background()
	objs := []*unstructured.Unstructured{labelled(configMap(ns, "raced", "mine", "h1"), "ns.me")}
	live := a.Prefetch(ctx, objs, func(*unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool) { return nil, false })
	if m, ok := live(objs[0]); !ok || m != nil {
		t.Fatalf("prefetched %v %v, want absent", m, ok)
	}
	dc, _ := kube.Dynamic(t)
	// Someone else, in between.
	if _, err := dc.Resource(configMaps).Namespace(ns).Create(ctx, configMap(ns, "raced", "theirs", "h0"),
		metav1.CreateOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	cs, err := a.ApplyAll(ctx, objs, apply.SetOptions{Live: live, Options: []apply.Option{apply.Owned(owner, "ns.me")}})
	if !errors.Is(err, apply.ErrNotOwned) || len(cs) != 1 || cs[0].Action != action.Skipped {
		t.Fatalf("ApplyAll over an object created since the read: %v, %v; want skipped with ErrNotOwned", cs, err)
	}
	got, err := dc.Resource(configMaps).Namespace(ns).Get(ctx, "raced", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "value"); v != "theirs" || got.GetLabels()[owner] != "" {
		t.Fatalf("the other object changed: value %q, labels %v", v, got.GetLabels())
	}
}
