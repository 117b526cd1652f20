package render_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/tinyctl/tinyctl/deploy"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// kube is the real kube-apiserver shared by this package's tests.
var kube *testenv.Kube

func TestMain(m *testing.M) { testenv.RunWithKube(m, &kube) }

// fieldManager is the field manager the reconciler applies with.
const fieldManager = "tinyctl"

// resource maps a rendered child to its API resource.
func resource(t *testing.T, u *unstructured.Unstructured) schema.GroupVersionResource {
	t.Helper()
	plural := map[string]string{
		"Deployment":          "deployments",
		"NetworkPolicy":       "networkpolicies",
		"PodDisruptionBudget": "poddisruptionbudgets",
		"ScaledObject":        "scaledobjects",
	}[u.GetKind()]
	if plural == "" {
		t.Fatalf("no resource known for kind %s", u.GetKind())
	}
	return u.GroupVersionKind().GroupVersion().WithResource(plural)
}

// applyChild server-side applies u as the reconciler does (field manager
// tinyctl, forced), as a dry run unless real is set.
func applyChild(t *testing.T, dc dynamic.Interface, u *unstructured.Unstructured, real bool) (*unstructured.Unstructured, error) {
	t.Helper()
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if !real {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return dc.Resource(resource(t, u)).Namespace(u.GetNamespace()).Apply(context.Background(), u.GetName(), u, opts)
}

// renderIn renders tc as if it had been published in namespace ns.
func renderIn(t *testing.T, tc renderCase, ns string) []*unstructured.Unstructured {
	t.Helper()
	tc.component.Metadata.Namespace = ns
	children, err := mustRender(t, tc).Children()
	if err != nil {
		t.Fatal(err)
	}
	return children
}

// TestAPIServerAcceptsRenderedObjects applies every case's Deployment,
// NetworkPolicy and PodDisruptionBudget to a namespace that warns on the restricted Pod Security
// Standard, and expects no warning: the worker would be admitted where
// that standard is enforced.
func TestAPIServerAcceptsRenderedObjects(t *testing.T) {
	ns := kube.RestrictedNamespace(t)
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			dc, warnings := kube.Dynamic(t)
			for _, u := range renderIn(t, tc, ns) {
				if u.GetKind() == "ScaledObject" {
					continue // its CRD: TestScaledObjectMatchesCRD
				}
				if _, err := applyChild(t, dc, u, false); err != nil {
					t.Fatalf("apply %s: %v", u.GetKind(), err)
				}
			}
			if w := warnings.PodSecurity(); len(w) > 0 {
				t.Errorf("PodSecurity warnings: %q", w)
			}
		})
	}
}

// TestAPIServerKeepsEveryPosture applies the NetworkPolicy of every egress
// posture, for a dual-stack cluster with NodeLocal DNSCache and with or
// without a collector: the API server accepts it without a warning and
// stores the spec as rendered, so what the posture tests evaluate is what
// the cluster enforces, and comparing desired and live finds no drift.
func TestAPIServerKeepsEveryPosture(t *testing.T) {
	ns := kube.Namespace(t, nil)
	for _, tc := range postureCases() {
		for name, endpoint := range map[string]string{"collector": render.DefaultCollectorEndpoint, "no collector": "-"} {
			tc.cluster.Collector.Endpoint = endpoint
			t.Run(tc.name+" with "+name, func(t *testing.T) {
				np := renderIn(t, tc, ns)[0] // render.Children puts the NetworkPolicy first
				dc, warnings := kube.Dynamic(t)
				live, err := applyChild(t, dc, np, true)
				if err != nil {
					t.Fatalf("apply NetworkPolicy: %v", err)
				}
				if w := warnings.All(); len(w) > 0 {
					t.Errorf("warnings: %q", w)
				}
				if diff := cmp.Diff(np.Object["spec"], live.Object["spec"]); diff != "" {
					t.Errorf("NetworkPolicy spec changed by the API server (-rendered +live):\n%s", diff)
				}
			})
		}
	}
}

// TestUnhardenedPodIsReported proves the check above can fail: the same
// Deployment without runAsNonRoot and the capabilities drop draws
// PodSecurity warnings.
func TestUnhardenedPodIsReported(t *testing.T) {
	ns := kube.RestrictedNamespace(t)
	dep := renderIn(t, renderCases()[0], ns)[1] // NetworkPolicy, Deployment
	pod := []string{"spec", "template", "spec"}
	unstructured.RemoveNestedField(dep.Object, append(pod, "securityContext", "runAsNonRoot")...)
	ctrs, _, _ := unstructured.NestedSlice(dep.Object, append(pod, "containers")...)
	for _, c := range ctrs {
		unstructured.RemoveNestedField(c.(map[string]any), "securityContext")
	}
	if err := unstructured.SetNestedSlice(dep.Object, ctrs, append(pod, "containers")...); err != nil {
		t.Fatal(err)
	}
	dc, warnings := kube.Dynamic(t)
	if _, err := applyChild(t, dc, dep, false); err != nil {
		t.Fatalf("apply: %v", err)
	}
	w := strings.Join(warnings.PodSecurity(), "\n")
	for _, want := range []string{"runAsNonRoot", "capabilities", "allowPrivilegeEscalation"} {
		if !strings.Contains(w, want) {
			t.Errorf("PodSecurity warnings do not mention %s:\n%s", want, w)
		}
	}
}

// TestScaledDeploymentLeavesReplicasToKEDA applies a KEDA-scaled
// Deployment for real and checks that tinyctl's field manager does not own
// spec.replicas, so KEDA's scaling survives every later apply.
func TestScaledDeploymentLeavesReplicasToKEDA(t *testing.T) {
	ns := kube.Namespace(t, nil)
	dep := ofKind(t, renderIn(t, findCase(t, "scaled-to-zero"), ns), "Deployment")
	dc, _ := kube.Dynamic(t)
	live, err := applyChild(t, dc, dep, true)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == fieldManager && strings.Contains(string(mf.FieldsV1.GetRawBytes()), `"f:replicas"`) {
			t.Errorf("field manager %s owns spec.replicas: %s", fieldManager, mf.FieldsV1.GetRawBytes())
		}
	}
}

// TestScaledObjectMatchesCRD installs deploy's ScaledObject CRD and applies
// every rendered ScaledObject: the schema accepts it and keeps every field
// (a structural schema silently prunes fields it does not know).
func TestScaledObjectMatchesCRD(t *testing.T) {
	kube.ApplyCRD(t, deploy.ScaledObjectCRD)
	ns := kube.Namespace(t, nil)
	dc, _ := kube.Dynamic(t)
	applied := 0
	for _, tc := range renderCases() {
		children := renderIn(t, tc, ns)
		so := children[len(children)-1]
		if so.GetKind() != "ScaledObject" {
			continue
		}
		live, err := applyChild(t, dc, so, true)
		if err != nil {
			t.Fatalf("%s: apply ScaledObject: %v", tc.name, err)
		}
		if diff := cmp.Diff(so.Object["spec"], live.Object["spec"]); diff != "" {
			t.Errorf("%s: ScaledObject spec changed by the API server (-rendered +live):\n%s", tc.name, diff)
		}
		applied++
	}
	if applied == 0 {
		t.Fatal("no case renders a ScaledObject")
	}
}

// TestCRDRefusesMalformedScaledObjects checks that the CRD schema rejects
// what KEDA could not act on, so tinyctl's tests catch a rendering mistake.
// A create reports the schema violation as Invalid (422), naming the field.
// Server-side apply refuses the object too, but a value of the wrong type
// fails while building the typed patch and comes back as an InternalError
// (500): whoever classifies apply errors must not retry that one.
func TestCRDRefusesMalformedScaledObjects(t *testing.T) {
	kube.ApplyCRD(t, deploy.ScaledObjectCRD)
	ns := kube.Namespace(t, nil)
	dc, _ := kube.Dynamic(t)
	tests := map[string]struct {
		field   string
		breakIt func(so map[string]any)
	}{
		"no triggers": {"spec.triggers", func(so map[string]any) {
			unstructured.RemoveNestedField(so, "spec", "triggers")
		}},
		"minReplicaCount is a string": {"spec.minReplicaCount", func(so map[string]any) {
			_ = unstructured.SetNestedField(so, "zero", "spec", "minReplicaCount")
		}},
		"no scale target name": {"spec.scaleTargetRef.name", func(so map[string]any) {
			unstructured.RemoveNestedField(so, "spec", "scaleTargetRef", "name")
		}},
		"trigger without type": {"spec.triggers[0].type", func(so map[string]any) {
			_ = unstructured.SetNestedSlice(so, []any{map[string]any{"metadata": map[string]any{}}}, "spec", "triggers")
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			so := ofKind(t, renderIn(t, findCase(t, "scaled-to-zero"), ns), "ScaledObject")
			tt.breakIt(so.Object)
			_, err := dc.Resource(resource(t, so)).Namespace(ns).Create(context.Background(), so,
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("create error = %v, want Invalid naming %s", err, tt.field)
			}
			if _, err := applyChild(t, dc, so, false); err == nil {
				t.Error("apply accepted the malformed ScaledObject")
			}
		})
	}
}

// ofKind is the child of kind among children.
func ofKind(t *testing.T, children []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, c := range children {
		if c.GetKind() == kind {
			return c
		}
	}
	t.Fatalf("no %s among the rendered children", kind)
	return nil
}

func findCase(t *testing.T, name string) renderCase {
	t.Helper()
	for _, tc := range renderCases() {
		if tc.name == name {
			return tc
		}
	}
	t.Fatalf("no render case %q", name)
	return renderCase{}
}
