package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/reconcile"
)

func TestBurstOfPutsToOneKeyCoalesces(t *testing.T) {
	// A quiet period long enough that a loaded machine's pauses between
	// puts do not end the burst, and no cap on the wait: the burst then
	// costs one reconcile for its first put and one for its last.
	e := newEnv(t, reconcile.Config{Coalesce: 300 * time.Millisecond, CoalesceMax: time.Minute})
	e.start()
	mark := kube.AuditMark(t)
	var last uint64
	var comp api.Component
	for i := range 1000 {
		comp = e.component("burst", func(c *api.Component) {
			c.Spec.Env = []api.EnvVar{{Name: "GENERATION", Value: fmt.Sprint(i)}}
		})
		last = e.publish(comp)
	}
	e.waitStatus("burst", api.ConditionApplied, "True", last)
	e.waitFor(deployments, "burst", envIs("GENERATION", "999"))
	w := kubeWrites(t, mark, e.ns)
	t.Logf("1000 puts -> %d Deployment writes, %d NetworkPolicy writes", w["deployments"], w["networkpolicies"])
	// Without coalescing the workers catch a revision every few puts (11
	// writes on this machine).
	if w["deployments"] > 2 {
		t.Errorf("1000 puts cost %d Deployment writes, want at most 2 (the first put and the last)", w["deployments"])
	}
}

func envIs(name, value string) func(*unstructured.Unstructured) error {
	return func(d *unstructured.Unstructured) error {
		ctrs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		for _, ev := range ctrs[0].(map[string]any)["env"].([]any) {
			m := ev.(map[string]any)
			if m["name"] == name {
				if m["value"] != value {
					return fmt.Errorf("%s=%v, want %s", name, m["value"], value)
				}
				return nil
			}
		}
		return fmt.Errorf("no env %s", name)
	}
}

func TestPoisonSpecDoesNotBlockTheOthers(t *testing.T) {
	obs := newCounter()
	e := newEnv(t, reconcile.Config{})
	e.obs = obs
	e.start()
	poisonKey := api.Key(e.ns, "poison")
	// A value that decodes but is invalid: no tag, a bare '>' subject.
	poison := fmt.Sprintf(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"poison","namespace":%q},"spec":{"image":"nginx","jobs":{"subjects":[">"]}}}`, e.ns)
	prev, err := e.specs.Put(context.Background(), poisonKey, []byte(poison))
	if err != nil {
		t.Fatal(err)
	}
	var revs []uint64
	for i := range 99 {
		revs = append(revs, e.publish(e.component(fmt.Sprintf("healthy-%02d", i))))
	}
	for i := range 99 {
		e.waitStatus(fmt.Sprintf("healthy-%02d", i), api.ConditionApplied, "True", revs[i])
	}
	rec := e.waitStatus("poison", api.ConditionStalled, "True", prev)
	ready, _ := condition(rec.Conditions, api.ConditionApplied)
	for _, want := range []string{"spec.image", "spec.jobs.subjects[0]"} {
		if !strings.Contains(ready.Message, want) {
			t.Errorf("poison Ready message %q does not name %s", ready.Message, want)
		}
	}
	// No hot loop: over the next second the poison key is not reconciled
	// again (nothing about it changed). This observes an absence for a fixed
	// window; it does not wait for a condition.
	before := obs.count(poisonKey)
	window := time.After(time.Second)
	<-window
	if after := obs.count(poisonKey); after != before {
		t.Errorf("poison key reconciled %d more times without a new revision", after-before)
	}
}

func condition(conds []api.Condition, typ string) (api.Condition, bool) {
	for _, c := range conds {
		if c.Type == typ {
			return c, true
		}
	}
	return api.Condition{}, false
}

func TestScaledObjectAppearsWhenTheCRDIsInstalledLater(t *testing.T) {
	if crdInstalled(t) {
		kube.DeleteCRD(t, "scaledobjects.keda.sh")
	}
	e := newEnv(t, reconcile.Config{})
	e.start()
	rev := e.publish(e.component("later", scaled))
	e.waitFor(deployments, "later", nil)
	rec := e.waitStatus("later", api.ConditionApplied, "False", rev)
	if r, _ := condition(rec.Conditions, api.ConditionApplied); r.Reason != "KindNotInstalled" {
		t.Errorf("Ready reason %q, want KindNotInstalled", r.Reason)
	}
	withScaledObjectCRD(t)
	e.waitFor(scaledObjects, "later", nil)
	e.waitStatus("later", api.ConditionApplied, "True", rev)
}

func TestMissingNamespaceIsAClearCondition(t *testing.T) {
	e := newEnv(t, reconcile.Config{Namespaces: []string{"no-such-namespace"}})
	e.start()
	comp := e.component("lost", func(c *api.Component) { c.Metadata.Namespace = "no-such-namespace" })
	b, _ := api.Canonical(comp)
	rev, err := e.specs.Put(context.Background(), api.Key("no-such-namespace", "lost"), b)
	if err != nil {
		t.Fatal(err)
	}
	var rec status.Record
	waitUntil(t, func() error {
		rec, err = e.statuses.Get(context.Background(), api.Key("no-such-namespace", "lost"), e.cfg.Cluster.Name)
		if err != nil {
			return err
		}
		if r, _ := condition(rec.Conditions, api.ConditionApplied); r.Reason != "NamespaceMissing" || rec.ObservedRevision != rev {
			return errors.New("not NamespaceMissing yet")
		}
		return nil
	})
	if r, _ := condition(rec.Conditions, api.ConditionApplied); !strings.Contains(r.Message, `"no-such-namespace"`) {
		t.Errorf("message %q does not name the namespace", r.Message)
	}
}
