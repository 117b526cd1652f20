package apply_test

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/render"
)

// fencedSecret is a Secret as tinyctl writes one (the label the chart's
// fence policy selects), holding value.
func fencedSecret(ns, value, hash string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": ns,
			"labels":      map[string]any{render.LabelManagedBy: render.ManagedByValue},
			"annotations": map[string]any{hashKey: hash}},
		"stringData": map[string]any{"value": value},
	}}
}

// TestAWriteOfAnOlderTenureIsRefused: with the chart's fence policy, a
// write carrying an older fencing token than the object's is refused by
// the API server even when the writer's cache still showed the object as
// the old tenure left it (a write delayed in flight past a takeover), and
// by the writer itself when its cache shows the newer token; a delete of
// the older tenure is refused too. The newer tenure, and another manager
// writing no token, still write.
func TestAWriteOfAnOlderTenureIsRefused(t *testing.T) {
	kube.InstallFence(t)
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	ctx := context.Background()
	secrets := kube.Clientset(t).CoreV1().Secrets(ns)
	now := time.Now().UTC()
	older, newer := now.Format(lease.TokenLayout), now.Add(20*time.Second).Format(lease.TokenLayout)

	mustApply(t, a, fencedSecret(ns, "one", "h1"), action.Created, apply.Fenced(older))
	live, err := secrets.Get(ctx, "creds", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asTheOldTenureLeftIt := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: live.ObjectMeta}
	if got := asTheOldTenureLeftIt.Annotations[apply.AnnotationFence]; got != older {
		t.Fatalf("the written object carries token %q, want %q", got, older)
	}
	mustApply(t, a, fencedSecret(ns, "two", "h2"), action.Configured, apply.Fenced(newer))
	if d, err := a.Diff(ctx, fencedSecret(ns, "two", "h2")); err != nil || d != "" {
		t.Fatalf("diff of the unchanged object: %v\n%s; want none (the token is not content)", err, d)
	}

	// The old tenure's write, judged on what it last saw, reaches the API
	// server, which refuses it.
	res, err := a.Apply(ctx, fencedSecret(ns, "stale", "h3"), apply.Fenced(older), apply.KnownLive(asTheOldTenureLeftIt))
	if !errors.Is(err, apply.ErrFenced) || res.Action != action.Skipped {
		t.Fatalf("the old tenure's write: %s, %v; want Skipped with ErrFenced", res.Action, err)
	}
	t.Logf("refused by the API server: %v", err)
	// Seeing the newer token, it sends nothing.
	res, err = a.Apply(ctx, fencedSecret(ns, "stale", "h3"), apply.Fenced(older))
	if !errors.Is(err, apply.ErrFenced) || res.Action != action.Skipped {
		t.Fatalf("the old tenure's write on a fresh read: %s, %v; want Skipped with ErrFenced", res.Action, err)
	}
	if _, err := a.Delete(ctx, corev1.SchemeGroupVersion.WithKind("Secret"), ns, "creds", apply.Fenced(older)); !errors.Is(err, apply.ErrFenced) {
		t.Fatalf("the old tenure's delete: %v, want ErrFenced", err)
	}
	if got := valueOf(t, secrets, ctx); got != "two" {
		t.Fatalf("the Secret holds %q after the old tenure's writes, want the newer tenure's %q", got, "two")
	}

	// Another manager's patch carries no token and passes; so does the
	// newer tenure, which can delete.
	_, err = secrets.Patch(ctx, "creds", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`), metav1.PatchOptions{FieldManager: "kubectl-label"})
	if err != nil {
		t.Fatalf("another manager's label: %v", err)
	}
	mustApply(t, a, fencedSecret(ns, "three", "h4"), action.Configured, apply.Fenced(newer))
	if res, err := a.Delete(ctx, corev1.SchemeGroupVersion.WithKind("Secret"), ns, "creds", apply.Fenced(newer)); err != nil || res.Action != action.Deleted {
		t.Fatalf("the newer tenure's delete: %s, %v", res.Action, err)
	}
}

func valueOf(t *testing.T, secrets interface {
	Get(context.Context, string, metav1.GetOptions) (*corev1.Secret, error)
}, ctx context.Context) string {
	t.Helper()
	s, err := secrets.Get(ctx, "creds", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(s.Data["value"])
}
