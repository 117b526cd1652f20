package provision_test

import (
	"context"
	"fmt"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision"
)

// TestAllNamespacesGrantsNoWriteInTheDeniedOnes installs the controller to
// manage every namespace (install --all-namespaces), with minted worker
// credentials (Secrets): the API server, asked through
// SubjectAccessReviews for the controller's ServiceAccount, lets it write
// Deployments, NetworkPolicies, ScaledObjects and Secrets in a namespace
// that existed at install, and none of them, nor read a Secret, in
// kube-system, kube-public, kube-node-lease or the runtime's namespace, or
// in a namespace made after install, until install runs again.
func TestAllNamespacesGrantsNoWriteInTheDeniedOnes(t *testing.T) {
	ctx := context.Background()
	before := kube.RestrictedNamespace(t)
	r := newRuntime(t, provision.Options{})
	keys, err := identity.NewKeys()
	testenv.Must(t, err)
	values := map[string]any{"namespaces": []any{},
		"nats": map[string]any{"identity": map[string]any{"signerSecret": "signer", "account": keys.AccountPublicKey()}}}
	_, err = r.p.EnsureNamespace(ctx)
	testenv.Must(t, err)
	_, err = r.p.InstallController(ctx, "", provision.AuthToken, values)
	testenv.Must(t, err)
	after := kube.RestrictedNamespace(t)

	user := "system:serviceaccount:" + r.ns + ":tinyctl"
	writes := []authorizationv1.ResourceAttributes{
		{Group: "apps", Resource: "deployments", Verb: "create"},
		{Group: "apps", Resource: "deployments", Verb: "patch"},
		{Group: "apps", Resource: "deployments", Verb: "delete"},
		{Group: "networking.k8s.io", Resource: "networkpolicies", Verb: "create"},
		{Group: "networking.k8s.io", Resource: "networkpolicies", Verb: "delete"},
		{Group: "keda.sh", Resource: "scaledobjects", Verb: "create"},
		{Group: "keda.sh", Resource: "scaledobjects", Verb: "delete"},
		{Group: "policy", Resource: "poddisruptionbudgets", Verb: "patch"},
		{Group: "policy", Resource: "poddisruptionbudgets", Verb: "delete"},
		{Resource: "secrets", Verb: "get"},
		{Resource: "secrets", Verb: "create"},
		{Resource: "secrets", Verb: "delete"},
	}
	checked := 0
	for _, tc := range []struct {
		ns   string
		want bool
	}{{before, true}, {"kube-system", false}, {"kube-public", false}, {"kube-node-lease", false}, {r.ns, false}, {after, false}} {
		for _, a := range writes {
			a.Namespace = tc.ns
			if got := allowed(t, user, a); got != tc.want {
				t.Errorf("%s %s in %s: allowed %t, want %t", a.Verb, a.Resource, tc.ns, got, tc.want)
			}
			checked++
		}
	}
	// What it needs everywhere: watching its children, checking a
	// namespace exists.
	for _, a := range []authorizationv1.ResourceAttributes{
		{Group: "apps", Resource: "deployments", Verb: "watch"},
		{Group: "networking.k8s.io", Resource: "networkpolicies", Verb: "list"},
		{Group: "policy", Resource: "poddisruptionbudgets", Verb: "watch"},
		{Resource: "namespaces", Verb: "get", Name: after},
	} {
		if !allowed(t, user, a) {
			t.Errorf("%s %s cluster-wide: refused, the controller needs it", a.Verb, a.Resource)
		}
		checked++
	}
	if want := len(writes)*6 + 4; checked != want {
		t.Fatalf("%d access reviews, want %d", checked, want)
	}

	// Install again: the namespace made since is granted.
	_, err = r.p.InstallController(ctx, "", provision.AuthToken, values)
	testenv.Must(t, err)
	if a := (authorizationv1.ResourceAttributes{Namespace: after, Group: "apps", Resource: "deployments", Verb: "create"}); !allowed(t, user, a) {
		t.Errorf("after a second install, create deployments in %s: refused", after)
	}
}

// allowed asks the API server whether user may do a.
func allowed(t *testing.T, user string, a authorizationv1.ResourceAttributes) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: []string{"system:serviceaccounts", "system:authenticated"}, ResourceAttributes: &a}}
	res, err := kube.Clientset(t).AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(fmt.Errorf("access review of %+v: %w", a, err))
	}
	return res.Status.Allowed
}
