package reconcile_test

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
)

// TestAForbiddenOptionalKindDoesNotWedgeTheLoop: the ScaledObject CRD is
// installed but the controller may not touch ScaledObjects. It still
// becomes ready and reconciles, says which kind it does not watch, and a
// component that scales runs its Deployment and reports Ready=False with
// reason KindForbidden naming the kind, instead of retrying for ever.
func TestAForbiddenOptionalKindDoesNotWedgeTheLoop(t *testing.T) {
	withScaledObjectCRD(t)
	e := newEnv(t, reconcile.Config{})
	e.kubeConfig = identityWithout(t, e.ns)
	e.start()
	if got := e.ctrl.Unwatched(); !strings.Contains(strings.Join(got, "\n"), "ScaledObject") {
		t.Errorf("Unwatched() = %q, want the ScaledObject kind", got)
	}

	rev := e.publish(e.component("plain"))
	e.waitStatus("plain", api.ConditionApplied, "True", rev)
	rev = e.publish(e.component("scales", scaled))
	e.waitFor(deployments, "scales", nil)
	rec := e.waitStatus("scales", api.ConditionApplied, "False", rev)
	r, _ := condition(rec.Conditions, api.ConditionApplied)
	if r.Reason != reasons.KindForbidden || !strings.Contains(r.Message, "ScaledObject") {
		t.Errorf("Ready = %+v, want reason %s naming ScaledObject", r, reasons.KindForbidden)
	}
}

// identityWithout is a user that may manage Deployments and
// NetworkPolicies in namespace ns and read namespaces, and nothing about
// ScaledObjects.
func identityWithout(t *testing.T, ns string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	rbac := kube.Clientset(t).RbacV1()
	user := "no-keda-" + rand.String(6)
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: all},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: all},
		}}, metav1.CreateOptions{})
	testenv.Must(t, err)
	_, err = rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{})
	testenv.Must(t, err)
	_, err = rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}}}},
		metav1.CreateOptions{})
	testenv.Must(t, err)
	_, err = rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}, metav1.CreateOptions{})
	testenv.Must(t, err)
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	cfg := rest.CopyConfig(kube.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}
