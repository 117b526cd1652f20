package reconcile_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/reconcile"
)

// TestAServiceAccountOnlyWhereTheOperatorAllowsIt: a component that names
// a ServiceAccount stalls, saying which setting allows it, in a namespace
// the operator did not open; where it did, the pods run as that account,
// without its token unless the spec asks for it.
func TestAServiceAccountOnlyWhereTheOperatorAllowsIt(t *testing.T) {
	asAccount := func(automount bool) func(*api.Component) {
		return func(c *api.Component) {
			c.Spec.ServiceAccountName, c.Spec.AutomountServiceAccountToken = "indexer", automount
		}
	}

	closed := newEnv(t, reconcile.Config{})
	closed.start()
	rev := closed.publish(closed.component("indexer", asAccount(false)))
	rec := closed.waitStatus("indexer", api.ConditionStalled, "True", rev)
	expectCondition(t, rec, api.ConditionApplied, "False", reasons.ServiceAccountNotAllowed, "--service-account-namespaces")

	open := newEnv(t, reconcile.Config{ServiceAccountNamespaces: []string{"*"}})
	open.start()
	runsAs := func(account string, automount bool) func(*unstructured.Unstructured) error {
		return func(d *unstructured.Unstructured) error {
			got, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
			mount, _, _ := unstructured.NestedBool(d.Object, "spec", "template", "spec", "automountServiceAccountToken")
			if got != account || mount != automount {
				return fmt.Errorf("pods run as %q, token mounted %v; want %q, %v", got, mount, account, automount)
			}
			return nil
		}
	}
	open.waitStatus("indexer", api.ConditionApplied, "True", open.publish(open.component("indexer", asAccount(false))))
	open.waitFor(deployments, "indexer", runsAs("indexer", false))
	open.waitStatus("indexer", api.ConditionApplied, "True", open.publish(open.component("indexer", asAccount(true))))
	open.waitFor(deployments, "indexer", runsAs("indexer", true))
}
