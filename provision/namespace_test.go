package provision_test

import (
	"context"
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/provision"
)

// TestExistingNamespace checks a runtime namespace the user made keeps
// their labels (a looser Pod Security level included), gets tinyctl's,
// and after uninstall is left as it was found.
func TestExistingNamespace(t *testing.T) {
	mine := map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "team": "a"}
	ns := kube.Namespace(t, mine)
	r := newRuntime(t, provision.Options{Namespace: ns})
	ctx := context.Background()
	labels := func() map[string]string {
		got, err := kube.Clientset(t).CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.DeletionTimestamp != nil {
			t.Fatal("namespace is being deleted")
		}
		l := maps.Clone(got.Labels)
		delete(l, "kubernetes.io/metadata.name")
		return l
	}

	res, err := r.p.EnsureNamespace(ctx)
	if err != nil || res.Action != action.Configured {
		t.Fatalf("EnsureNamespace = %s, %v; want configured", res, err)
	}
	want := map[string]string{
		"pod-security.kubernetes.io/enforce": "baseline", "team": "a",
		"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit": "restricted",
		provision.LabelNamespaceRole: provision.NamespaceRoleRuntime,
	}
	if got := labels(); !maps.Equal(got, want) {
		t.Errorf("labels = %v, want %v", got, want)
	}
	mark := kube.AuditMark(t)
	if res, err := r.p.EnsureNamespace(ctx); err != nil || res.Action != action.Unchanged {
		t.Errorf("EnsureNamespace again = %s, %v; want unchanged", res, err)
	}
	if w := kube.Writes(t, mark, byAdmin); len(w) > 0 {
		t.Errorf("EnsureNamespace again wrote: %+v", w)
	}

	if _, err := r.p.Uninstall(ctx, provision.UninstallOptions{}, func(res provision.Result) { t.Log(res) }); err != nil {
		t.Fatal(err)
	}
	if got := labels(); !maps.Equal(got, mine) {
		t.Errorf("labels after uninstall = %v, want the user's %v", got, mine)
	}
}
