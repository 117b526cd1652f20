package apply_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func deployment(ns, image, hash string) *unstructured.Unstructured {
	labels := map[string]any{"app": "worker"}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "worker", "namespace": ns, "annotations": map[string]any{hashKey: hash}},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "worker", "image": image,
					"env": []any{map[string]any{"name": "MODE", "value": "batch"}},
				}}},
			},
		},
	}}
}

// Other managers owning fields tinyctl never sets — a label added by
// kubectl label, kubectl rollout restart's stamp on the pod template, an
// annotation applied by a GitOps tool, an env var added by kubectl set env
// — leave the object up to date: applying the same content again writes
// nothing. A field tinyctl sets changed by another manager (the image) is
// taken back with one apply that names that manager.
func TestOnlyAnotherManagersChangeToAFieldTinyctlSetsForcesAnApply(t *testing.T) {
	ns := kube.Namespace(t, nil)
	a := newApplier(t)
	ctx := context.Background()
	mustApply(t, a, deployment(ns, "acme/worker:1", "h1"), action.Created)
	dc, _ := kube.Dynamic(t)
	d := dc.Resource(deployments).Namespace(ns)
	patch := func(manager string, body map[string]any) {
		t.Helper()
		data, err := json.Marshal(body)
		testenv.Must(t, err)
		_, err = d.Patch(ctx, "worker", types.StrategicMergePatchType, data, metav1.PatchOptions{FieldManager: manager})
		testenv.Must(t, err)
	}
	patch("kubectl-label", map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "media"}}})
	patch("kubectl-rollout", map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{"kubectl.kubernetes.io/restartedAt": "2026-12-02T10:00:00Z"}}}}})
	patch("kubectl-set", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "worker", "env": []any{map[string]any{"name": "DEBUG", "value": "1"}}}}}}}})
	gitops := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "worker", "namespace": ns, "annotations": map[string]any{"gitops.example.com/source": "repo"}}}}
	_, err := d.Apply(ctx, "worker", gitops, metav1.ApplyOptions{FieldManager: "gitops", Force: true})
	testenv.Must(t, err)

	live, err := d.Get(ctx, "worker", metav1.GetOptions{})
	testenv.Must(t, err)
	var others []string
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != "tinyctl" {
			others = append(others, mf.Manager)
		}
	}
	for _, m := range []string{"kubectl-label", "kubectl-rollout", "kubectl-set", "gitops"} {
		if !slices.Contains(others, m) {
			t.Fatalf("managers %v: %s is missing, the check would compare nothing", others, m)
		}
	}
	mark := kube.AuditMark(t)
	for range 3 { // a full resync, three times over
		mustApply(t, a, deployment(ns, "acme/worker:1", "h1"), action.Unchanged)
	}
	if w := kube.Writes(t, mark, func(e testenv.AuditEvent) bool { return e.ObjectRef.Namespace == ns }); len(w) != 0 {
		t.Fatalf("%d writes to an object whose other managers own only fields tinyctl does not set: %+v", len(w), w)
	}

	patch("kubectl-edit", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "worker", "image": "acme/worker:hacked"}}}}}})
	res, err := a.Apply(ctx, deployment(ns, "acme/worker:1", "h1"))
	testenv.Must(t, err)
	if res.Action != action.Configured || !slices.Equal(res.TakenFrom, []string{"kubectl-edit"}) {
		t.Fatalf("apply after kubectl-edit changed the image: %s taken from %v, want configured, taken from kubectl-edit", res.Action, res.TakenFrom)
	}
	got, err := d.Get(ctx, "worker", metav1.GetOptions{})
	testenv.Must(t, err)
	containers, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
	if img := containers[0].(map[string]any)["image"]; img != "acme/worker:1" {
		t.Fatalf("image %v after the apply, want it taken back", img)
	}
	mustApply(t, a, deployment(ns, "acme/worker:1", "h1"), action.Unchanged)
}
