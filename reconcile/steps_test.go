package reconcile_test

import (
	"fmt"
	"maps"
	"testing"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/reconcile"
)

// Every round trip a new and a changed component wait for is reported to
// the Observer by step: one guard read, one JetStream step, one
// Kubernetes step and one status record each (a reconcile retried on a
// loaded machine may add more, never fewer).
func TestEveryStepOfAnApplyIsObserved(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	obs := newCounter()
	e.obs = obs
	e.start()
	comp := e.component("stepped")
	e.waitStatus("stepped", api.ConditionApplied, "True", e.publish(comp))
	first := obs.stepsSeen()
	if err := atLeastOnce(first, nil); err != nil {
		t.Fatalf("a new component: %v", err)
	}

	comp.Spec.Env = []api.EnvVar{{Name: "MODE", Value: "fast"}}
	e.waitStatus("stepped", api.ConditionApplied, "True", e.publish(comp))
	if err := atLeastOnce(obs.stepsSeen(), first); err != nil {
		t.Fatalf("a changed component: %v", err)
	}
}

// atLeastOnce checks that every step was seen at least once more in now
// than in before (nil: none).
func atLeastOnce(now, before map[reconcile.Step]int) error {
	if len(now) != len(reconcile.Steps) {
		return fmt.Errorf("steps seen %v, want each of %v", now, reconcile.Steps)
	}
	for _, s := range reconcile.Steps {
		if now[s] <= before[s] {
			return fmt.Errorf("step %s: seen %d times, %d before; all %v", s, now[s], before[s], maps.Clone(now))
		}
	}
	return nil
}
