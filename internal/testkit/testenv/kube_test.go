package testenv

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var kube *Kube

func TestMain(m *testing.M) { RunWithKube(m, &kube) }

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// deployment builds a Deployment whose pod template is restricted-compliant
// when hardened is true and privileged otherwise.
func deployment(ns, name string, hardened bool) *unstructured.Unstructured {
	sc := map[string]any{"privileged": true}
	podSC := map[string]any{}
	if hardened {
		sc = map[string]any{
			"allowPrivilegeEscalation": false,
			"capabilities":             map[string]any{"drop": []any{"ALL"}},
			"runAsNonRoot":             true,
			"runAsUser":                int64(65532),
		}
		podSC = map[string]any{"seccompProfile": map[string]any{"type": "RuntimeDefault"}}
	}
	labels := map[string]any{"app": name}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"securityContext": podSC,
					"containers": []any{map[string]any{
						"name": "worker", "image": "registry.example.com/worker:1.0", "securityContext": sc,
					}},
				},
			},
		},
	}}
}

func applyObj(t *testing.T, dc dynamic.Interface, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got, err := dc.Resource(deployments).Namespace(obj.GetNamespace()).Apply(context.Background(),
		obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "tinyctl", Force: true})
	if err != nil {
		t.Fatalf("apply %s: %v", obj.GetName(), err)
	}
	return got
}

func TestServerSideApplyOwnsFieldsAndIsIdempotent(t *testing.T) {
	ns := kube.RestrictedNamespace(t)
	dc, _ := kube.Dynamic(t)
	first := applyObj(t, dc, deployment(ns, "worker", true))

	live, err := dc.Resource(deployments).Namespace(ns).Get(context.Background(), "worker", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	var found bool
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == "tinyctl" && mf.Operation == metav1.ManagedFieldsOperationApply {
			found = true
		}
	}
	if !found {
		t.Fatalf("managedFields has no Apply entry for manager tinyctl: %+v", live.GetManagedFields())
	}
	second := applyObj(t, dc, deployment(ns, "worker", true))
	if first.GetResourceVersion() != second.GetResourceVersion() {
		t.Fatalf("identical apply changed resourceVersion %s -> %s", first.GetResourceVersion(), second.GetResourceVersion())
	}
}

func TestWarningsReportPodSecurityViolations(t *testing.T) {
	ns := kube.RestrictedNamespace(t)
	dc, warnings := kube.Dynamic(t)

	applyObj(t, dc, deployment(ns, "hardened", true))
	if got := warnings.PodSecurity(); len(got) != 0 {
		t.Fatalf("hardened template: want no PodSecurity warnings, got %q", got)
	}
	applyObj(t, dc, deployment(ns, "privileged", false))
	if got := warnings.PodSecurity(); len(got) == 0 {
		t.Fatalf("privileged template: want PodSecurity warnings, got none (all warnings: %q)", warnings.All())
	}
}

func TestKubeconfigReachesTheAPIServer(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kube.Kubeconfig)
	if err != nil {
		t.Fatalf("load kubeconfig: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Fatalf("server version = %q, want v1.37.2", v.GitVersion)
	}
}

func TestKubeRestartKeepsData(t *testing.T) {
	ns := kube.RestrictedNamespace(t)
	dc, _ := kube.Dynamic(t)
	applyObj(t, dc, deployment(ns, "survivor", true))

	if err := kube.Restart(context.Background()); err != nil {
		t.Fatalf("restart: %v", err)
	}
	Eventually(t, 30*time.Second, func() error {
		_, err := dc.Resource(deployments).Namespace(ns).Get(context.Background(), "survivor", metav1.GetOptions{})
		return err
	})
}
