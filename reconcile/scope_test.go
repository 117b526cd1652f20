package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

func TestCreateNamespacesCreatesAMissingTarget(t *testing.T) {
	target := "t-made-" + rand.String(6)
	e := newEnv(t, reconcile.Config{CreateNamespaces: true})
	e.cfg.Namespaces = []string{e.ns, target}
	e.start()
	mark := kube.AuditMark(t)
	comp := e.component("maker", func(c *api.Component) { c.Metadata.Namespace = target })
	rev := e.publish(comp)
	testenv.Eventually(t, 30*time.Second, func() error {
		rec, err := e.statuses.Get(context.Background(), api.Key(target, "maker"), e.cfg.Cluster.Name)
		if err != nil || rec.ObservedRevision != rev || !rec.IsTrue(api.ConditionApplied) {
			return fmt.Errorf("status %+v (%v), want Ready at %d", rec.Status, err, rev)
		}
		return nil
	})
	ns, err := kube.Manager(t).Get(context.Background(), apply.Namespace, "", target)
	if err != nil || ns == nil {
		t.Fatalf("namespace %s: %v", target, err)
	}
	if ns.GetLabels()[render.LabelManagedBy] != render.ManagedByValue {
		t.Errorf("created namespace labels %v, want %s=%s", ns.GetLabels(), render.LabelManagedBy, render.ManagedByValue)
	}
	creates := kube.Writes(t, mark, func(ev testenv.AuditEvent) bool {
		return ev.ObjectRef.Resource == "namespaces" && ev.ObjectRef.Name == target && ev.Verb == "create"
	})
	if len(creates) != 1 {
		t.Fatalf("%d namespace creates, want 1", len(creates))
	}
}

func TestMissingNamespaceIsNotCreatedUnlessAsked(t *testing.T) {
	target := "t-absent-" + rand.String(6)
	e := newEnv(t, reconcile.Config{})
	e.cfg.Namespaces = []string{e.ns, target}
	e.start()
	rev := e.publish(e.component("waiter", func(c *api.Component) { c.Metadata.Namespace = target }))
	testenv.Eventually(t, 30*time.Second, func() error {
		rec, err := e.statuses.Get(context.Background(), api.Key(target, "waiter"), e.cfg.Cluster.Name)
		if err != nil {
			return err
		}
		if c, _ := rec.Condition(api.ConditionApplied); rec.ObservedRevision != rev || c.Reason != reasons.NamespaceMissing {
			return fmt.Errorf("status %+v, want Ready False NamespaceMissing at %d", rec.Status, rev)
		}
		return nil
	})
	if ns, _ := kube.Manager(t).Get(context.Background(), apply.Namespace, "", target); ns != nil {
		t.Fatalf("namespace %s was created without CreateNamespaces", target)
	}
}

func TestNamespaceOutsideTheAllowListIsRefused(t *testing.T) {
	other := kube.RestrictedNamespace(t)
	e := newEnv(t, reconcile.Config{}) // allows only e.ns
	e.start()
	rev := e.publish(e.component("intruder", func(c *api.Component) { c.Metadata.Namespace = other }))
	var rec = e.waitStatusIn(other, "intruder", api.ConditionStalled, "True", rev)
	c, _ := rec.Condition(api.ConditionApplied)
	if c.Reason != reasons.NamespaceNotAllowed || !strings.Contains(c.Message, other) {
		t.Fatalf("Ready %+v, want reason NamespaceNotAllowed naming %s", c, other)
	}
	if d, _ := kube.Manager(t).Get(context.Background(), apply.Deployment, other, "intruder"); d != nil {
		t.Fatal("a Deployment was created in a namespace the controller may not manage")
	}
}

// TestTheClustersOwnNamespacesAreNeverManagedUnlessListed: a Config that
// says nothing about denied namespaces (a Go embedder's) denies the
// cluster's own.
func TestTheClustersOwnNamespacesAreNeverManagedUnlessListed(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.cfg.Namespaces = []string{} // every namespace but the denied ones
	e.start()
	rev := e.publish(e.component("sneaky", func(c *api.Component) { c.Metadata.Namespace = "kube-system" }))
	rec := e.waitStatusIn("kube-system", "sneaky", api.ConditionStalled, "True", rev)
	c, _ := rec.Condition(api.ConditionApplied)
	if c.Reason != reasons.NamespaceNotAllowed || !strings.Contains(c.Message, `namespace "kube-system" is reserved`) {
		t.Fatalf("Ready %+v, want reason NamespaceNotAllowed saying kube-system is reserved", c)
	}
	if d, _ := kube.Manager(t).Get(context.Background(), apply.Deployment, "kube-system", "sneaky"); d != nil {
		t.Fatal("a Deployment was created in kube-system")
	}
	// Any other namespace is managed.
	rev = e.publish(e.component("fine"))
	e.waitStatus("fine", api.ConditionApplied, "True", rev)
}

func TestPlacementMovingAwayUnplacesButKeepsTheStream(t *testing.T) {
	e := newEnv(t, reconcile.Config{ClusterLabels: map[string]string{"env": "prod"}})
	e.start()
	here := e.component("mover", func(c *api.Component) { c.Spec.Placement = &api.Placement{Clusters: []string{"test"}} })
	rev := e.publish(here)
	e.waitStatus("mover", api.ConditionApplied, "True", rev)
	e.waitFor(deployments, "mover", nil)
	e.waitFor(networkPolicies, "mover", nil)

	away := e.component("mover", func(c *api.Component) { c.Spec.Placement = &api.Placement{Clusters: []string{"elsewhere"}} })
	e.publish(away)
	e.waitGone(deployments, "mover")
	e.waitGone(networkPolicies, "mover")
	testenv.Eventually(t, 10*time.Second, func() error {
		if _, err := e.status("mover"); err == nil {
			return fmt.Errorf("status record still present")
		}
		return nil
	})
	if e.stream("mover") == nil {
		t.Error("unplacing deleted the stream; only a delete with deletion.stream Delete may")
	}
}

func TestSubjectsOutsideTheNamespaceAreRefused(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.cfg.Tenancy = validate.Tenancy{Prefixes: map[string][]string{"elsewhere": {"shared.>"}}}
	e.start()
	rev := e.publish(e.component("poacher", func(c *api.Component) {
		c.Spec.Jobs.Subjects = []string{"billing.jobs.>"}
		c.Spec.Jobs.Publish = []string{e.ns + ".results"}
	}))
	rec := e.waitStatus("poacher", api.ConditionStalled, "True", rev)
	c, _ := rec.Condition(api.ConditionApplied)
	want := `spec.jobs.subjects[0]: Forbidden: "billing.jobs.>" is outside the subjects namespace ` + e.ns + ` may use (` + e.ns + `.>)`
	if c.Reason != reasons.InvalidSpec || !strings.Contains(c.Message, want) {
		t.Fatalf("Ready %+v, want InvalidSpec naming %q", c, want)
	}
	if s := e.stream("poacher"); s != nil {
		t.Fatalf("a stream capturing another team's subjects was created: %v", s.Config.Subjects)
	}
}
