package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// The loop's own writes do not wake it for a full reconcile: a new
// component and a changed one cost one each, counted by the stream
// lookups a full reconcile of a known component makes (a new component's
// stream is created without one; a workload's health judged again makes
// none). An edit by someone else of a child wakes it: the positive
// control, and, since informer events arrive in order, once the edit is
// reverted the events of the loop's own writes before it have been
// handled.
func TestTheLoopIsNotWokenByItsOwnWrites(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	obs := newCounter()
	e.obs = obs
	e.start()
	info := "$JS.API.STREAM.INFO." + render.StreamName(e.ns, "solo")
	lookups := watchJetStreamAPI(t, e.conn.NATS(), func(s string) bool { return s == info })
	comp := e.component("solo")
	e.waitStatus("solo", api.ConditionApplied, "True", e.publish(comp))

	drift := func() {
		t.Helper()
		patch := `{"spec":{"template":{"spec":{"containers":[{"name":"worker","image":"registry.example.com/evil:6.6.6"}]}}}}`
		_, err := e.dyn.Resource(deployments).Namespace(e.ns).Patch(context.Background(), "solo",
			types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"})
		testenv.Must(t, err)
		e.waitFor(deployments, "solo", imageIs(comp.Spec.Image)) // reverted
		// The revert's own event judged before the next revision: after
		// it, the event would wake the loop (the component moved on since
		// the write), which is by design and not what is counted here.
		testenv.Eventually(t, 10*time.Second, func() error {
			if reconcile.AwaitsOwnEvent(e.ctrl, "Deployment", e.ns, "solo") {
				return errors.New("the revert's informer event has not reached the loop yet")
			}
			return nil
		})
	}
	fullReconciles := func(want int) {
		t.Helper()
		testenv.Eventually(t, 30*time.Second, func() error {
			if got := lookups.count(); got < want {
				return fmt.Errorf("%d full reconciles of a known component, want %d", got, want)
			}
			return nil
		})
		// A reconcile that failed (a timeout on a loaded machine) is
		// retried in full: that is not a wake by the loop's own write.
		failed := obs.failures()
		if got := lookups.count(); got < want || got > want+len(failed) {
			obs.mu.Lock()
			detail := fmt.Sprintf("reconciles %v, failed %q, full rechecks %d (found %v)", obs.reconciles, failed, obs.full, obs.found)
			obs.mu.Unlock()
			t.Fatalf("%d full reconciles of a known component (stream lookups %v), want %d; %s", got, lookups.seen(), want, detail)
		}
	}
	drift()
	fullReconciles(1) // created without a lookup, woken once by the edit

	comp.Spec.Env = []api.EnvVar{{Name: "MODE", Value: "fast"}}
	e.waitStatus("solo", api.ConditionApplied, "True", e.publish(comp))
	e.waitFor(deployments, "solo", envIs("MODE", "fast"))
	drift()
	fullReconciles(3) // changed once, woken once by the edit
}
