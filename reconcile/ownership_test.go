package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
)

// TestObjectsTinyctlDidNotCreateAreNeverTouched: a cluster admin's
// Deployment (another tool's label) and default-deny NetworkPolicy (no
// labels) that happen to carry a component's name, made before the
// controller starts or while it runs, survive its publish and its delete
// unchanged, and the component says why it cannot run.
func TestObjectsTinyctlDidNotCreateAreNeverTouched(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	ctx := context.Background()
	before := createForeign(t, e, "legacy")
	e.start()
	// Made while the controller runs: its caches learn of them from a
	// watch event, not from their first list.
	after := createForeign(t, e, "latecomer")
	for _, f := range []foreign{before, after} {
		comp := e.component(f.name)
		rev := e.publish(comp)
		rec := e.waitStatus(f.name, api.ConditionApplied, "False", rev)
		c, _ := rec.Condition(api.ConditionApplied)
		if c.Reason != reasons.Conflict || !strings.Contains(c.Message, "tinyctl did not create it") {
			t.Errorf("%s: Applied = %+v, want reason %s saying tinyctl did not create the object", f.name, c, reasons.Conflict)
		}
		f.unchanged(t, e, "after publish")

		testenv.Must(t, e.specs.Delete(ctx, api.KeyOf(defaults.Apply(comp)), 0))
		testenv.Eventually(t, 30*time.Second, func() error {
			if _, err := e.status(f.name); err == nil {
				return errors.New("status record still present")
			}
			return nil
		})
		f.unchanged(t, e, "after delete")
	}
}

// foreign is a cluster admin's Deployment and NetworkPolicy, as created.
type foreign struct {
	name               string
	deployment, policy string // resource versions
}

// createForeign makes a cluster admin's Deployment, labelled as another
// tool's, and default-deny NetworkPolicy, with no labels, named name.
func createForeign(t *testing.T, e *env, name string) foreign {
	t.Helper()
	cs := kube.Clientset(t)
	ctx := context.Background()
	labels := map[string]string{"app": name}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name, "app.kubernetes.io/managed-by": "Helm"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/legacy:1", SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					}}},
				},
			},
		},
	}
	d, err := cs.AppsV1().Deployments(e.ns).Create(ctx, deploy, metav1.CreateOptions{})
	testenv.Must(t, err)
	np, err := cs.NetworkingV1().NetworkPolicies(e.ns).Create(ctx, &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}},
	}, metav1.CreateOptions{})
	testenv.Must(t, err)
	return foreign{name: name, deployment: d.ResourceVersion, policy: np.ResourceVersion}
}

// unchanged fails t unless both objects are still there, as created.
func (f foreign) unchanged(t *testing.T, e *env, when string) {
	t.Helper()
	if live := e.get(deployments, f.name); live == nil || live.GetResourceVersion() != f.deployment {
		t.Errorf("%s %s: the admin's Deployment was changed or removed: %v", f.name, when, live)
	}
	if live := e.get(networkPolicies, f.name); live == nil || live.GetResourceVersion() != f.policy {
		t.Errorf("%s %s: the admin's NetworkPolicy was changed or removed: %v", f.name, when, live)
	}
}

// TestNoWorkerRunsWithoutItsNetworkPolicy: while the API server refuses a
// component's NetworkPolicy, its Deployment is not created; once the
// refusal ends and the component is published again, both are.
func TestNoWorkerRunsWithoutItsNetworkPolicy(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	ctx := context.Background()
	adm := kube.Clientset(t).AdmissionregistrationV1()
	name := "deny-netpol-" + rand.String(6)
	_, err := adm.ValidatingAdmissionPolicies().Create(ctx, &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{"networking.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"networkpolicies"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "network policies are frozen"}},
		},
	}, metav1.CreateOptions{})
	testenv.Must(t, err)
	t.Cleanup(func() {
		_ = adm.ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	_, err = adm.ValidatingAdmissionPolicyBindings().Create(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": e.ns},
			}},
		},
	}, metav1.CreateOptions{})
	testenv.Must(t, err)
	unbind := func() {
		_ = adm.ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	}
	t.Cleanup(unbind)
	// The policy takes effect once the API server has loaded it.
	enforced := func(want bool) {
		t.Helper()
		probe := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
		testenv.Eventually(t, 30*time.Second, func() error {
			_, err := kube.Clientset(t).NetworkingV1().NetworkPolicies(e.ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if (err != nil) != want {
				return fmt.Errorf("admission policy enforced = %v, want %v", err != nil, want)
			}
			return nil
		})
	}
	enforced(true)

	e.start()
	comp := e.component("fenced")
	rev := e.publish(comp)
	rec := e.waitStatus("fenced", api.ConditionApplied, "False", rev)
	c, _ := rec.Condition(api.ConditionApplied)
	if !strings.Contains(c.Message, "network policies are frozen") {
		t.Errorf("Ready = %+v, want the API server's refusal of the NetworkPolicy", c)
	}
	if d := e.get(deployments, "fenced"); d != nil {
		t.Fatalf("the Deployment was created although its NetworkPolicy was refused")
	}

	// An admission refusal stalls the revision; the next one is tried.
	unbind()
	enforced(false)
	comp.Spec.Image += "-1"
	rev = e.publish(comp)
	e.waitStatus("fenced", api.ConditionApplied, "True", rev)
	e.waitFor(networkPolicies, "fenced", nil)
	e.waitFor(deployments, "fenced", nil)
}
