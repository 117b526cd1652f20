package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/defaults"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

func TestRestartWithNothingChangedWritesNothing(t *testing.T) {
	withScaledObjectCRD(t)
	e := newEnv(t, reconcile.Config{})
	e.start()
	revs := map[string]uint64{}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		mut := func(*api.Component) {}
		if name == "beta" {
			mut = scaled
		}
		revs[name] = e.publish(e.component(name, mut))
	}
	for name, rev := range revs {
		e.waitStatus(name, api.ConditionApplied, "True", rev)
	}
	e.halt()

	mark := kube.AuditMark(t)
	js := watchJetStreamWrites(t, e.conn.NATS())
	statusBefore := lastSeq(t, e, "KV_"+status.DefaultBucket)
	rechecks := newCounter()
	e.obs = rechecks
	e.start() // waits for Ready: every initial value reconciled once
	// Then a full recheck, which re-enqueues every key, and its work.
	waitUntil(t, func() error {
		if rechecks.fullRechecks() == 0 || e.ctrl.QueueDepth() != 0 {
			return fmt.Errorf("%d full rechecks, queue %d", rechecks.fullRechecks(), e.ctrl.QueueDepth())
		}
		return nil
	})
	if w := kubeWrites(t, mark, e.ns); len(w) != 0 {
		t.Errorf("restart wrote to the API server: %v", w)
	}
	if n := js.count(); n != 0 {
		t.Errorf("restart made %d JetStream writes: %v", n, js.calls)
	}
	if after := lastSeq(t, e, "KV_"+status.DefaultBucket); after != statusBefore {
		t.Errorf("restart wrote %d status records", after-statusBefore)
	}
}

func lastSeq(t testing.TB, e *env, stream string) uint64 {
	t.Helper()
	s, err := e.js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo().State.LastSeq
}

func TestDeleteRacingReconcileNeverResurrects(t *testing.T) {
	e := newEnv(t, reconcile.Config{Workers: 4})
	e.start()
	ctx := context.Background()
	for i := range 100 {
		comp := e.component(fmt.Sprintf("racer-%03d", i))
		e.publish(comp)
		if err := e.specs.Delete(ctx, api.KeyOf(defaults.Apply(comp)), 0); err != nil {
			t.Fatal(err)
		}
	}
	final := e.bucketRevision()
	waitUntil(t, func() error {
		if e.ctrl.LastRevision() < final || e.ctrl.QueueDepth() != 0 {
			return fmt.Errorf("controller at revision %d of %d, queue %d", e.ctrl.LastRevision(), final, e.ctrl.QueueDepth())
		}
		return nil
	})
	// Everything delivered has been processed: no child may remain (a
	// put reconciled before its delete arrived leaves children for a
	// moment; the NetworkPolicy goes after its Deployment).
	waitUntil(t, func() error {
		for _, gvr := range []schema.GroupVersionResource{deployments, networkPolicies} {
			list, err := e.dyn.Resource(gvr).Namespace(e.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if n := len(list.Items); n != 0 {
				return fmt.Errorf("%d %s resurrected, e.g. %s", n, gvr.Resource, list.Items[0].GetName())
			}
		}
		return nil
	})
}

func (e *env) bucketRevision() uint64 {
	return lastSeq(e.t, e, "KV_"+specs.DefaultBucket)
}

func TestRecreatedEmptyBucketDeletesNothing(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.start()
	names := []string{"keep-a", "keep-b", "keep-c"}
	for _, n := range names {
		rev := e.publish(e.component(n))
		e.waitStatus(n, api.ConditionApplied, "True", rev)
	}
	ctx := context.Background()
	if err := e.js.DeleteKeyValue(ctx, specs.DefaultBucket); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.specs, err = specs.Open(ctx, e.conn, specs.Config{}, kv.Ensure); err != nil {
		t.Fatal(err)
	}
	// Orphans are reported once the controller sees the empty bucket...
	waitUntil(t, func() error {
		orphans := e.ctrl.Orphans()
		for _, n := range names {
			if len(orphans[api.Key(e.ns, n)]) == 0 {
				return fmt.Errorf("%s not reported as orphan (orphans: %v)", n, orphans)
			}
		}
		return nil
	})
	for _, n := range names {
		e.waitStatus(n, api.ConditionOrphaned, "True", 0)
		// ...and nothing was deleted.
		if e.get(deployments, n) == nil || e.get(networkPolicies, n) == nil {
			t.Errorf("%s: children deleted after the bucket was recreated", n)
		}
		if e.stream(n) == nil {
			t.Errorf("%s: stream deleted", n)
		}
	}
}

// staleReplica answers the guard's read of a deleted key with the put
// before the delete, as a replica of a clustered bucket still catching up
// does, for its first stale reads.
type staleReplica struct {
	reconcile.Specs
	mu      sync.Mutex
	puts    map[string]reconcile.Entry
	stale   int
	answers int
}

func (s *staleReplica) Latest(ctx context.Context, key string) (reconcile.Entry, bool, error) {
	e, found, err := s.Specs.Latest(ctx, key)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil || !found:
	case !e.Deleted:
		s.puts[key] = e
	case s.stale > 0 && s.puts[key].Revision != 0:
		s.stale--
		s.answers++
		return s.puts[key], true, nil
	}
	return e, found, err
}

func TestAStaleReadDoesNotDropADelete(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	stale := &staleReplica{puts: map[string]reconcile.Entry{}, stale: 3}
	e.specsOf = func(s reconcile.Specs) reconcile.Specs { stale.Specs = s; return stale }
	e.start()
	comp := e.component("lagging")
	e.publish(comp)
	e.waitFor(deployments, "lagging", func(*unstructured.Unstructured) error { return nil })
	if err := e.specs.Delete(context.Background(), api.KeyOf(defaults.Apply(comp)), 0); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() error {
		if e.get(deployments, "lagging") != nil || e.get(networkPolicies, "lagging") != nil {
			return errors.New("the deleted component's Deployment or NetworkPolicy is still there")
		}
		return nil
	})
	stale.mu.Lock()
	defer stale.mu.Unlock()
	if stale.answers == 0 {
		t.Fatal("no read was answered stale: the test checked nothing")
	}
	t.Logf("%d reads answered with the put before the delete", stale.answers)
}

// deletedWhileEnsuring deletes a component while its stream is being
// ensured, and makes that step slow (as a JetStream leader election does),
// so the guard's first read is stale by the time the children are applied.
type deletedWhileEnsuring struct {
	reconcile.Streams
	t       *testing.T
	specs   *specs.Store
	key     string
	deleted atomic.Bool
}

func (d *deletedWhileEnsuring) Ensure(ctx context.Context, ns string, s jetstream.StreamConfig, c jetstream.ConsumerConfig, fresh bool) (action.Action, action.Action, uint64, error) {
	if d.deleted.CompareAndSwap(false, true) {
		if err := d.specs.Delete(ctx, d.key, 0); err != nil {
			d.t.Errorf("delete %s: %v", d.key, err)
		}
		<-time.After(500 * time.Millisecond) // the slow step, not a wait for a condition
	}
	return d.Streams.Ensure(ctx, ns, s, c, fresh)
}

func TestADeleteDuringASlowStepCreatesNoDeployment(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	comp := e.component("brief")
	key := api.KeyOf(defaults.Apply(comp))
	slow := &deletedWhileEnsuring{t: t, specs: e.specs, key: key}
	e.streamsOf = func(s reconcile.Streams) reconcile.Streams { slow.Streams = s; return slow }
	counts := newCounter()
	e.obs = counts
	e.start()
	w, err := e.dyn.Resource(deployments).Namespace(e.ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.publish(comp)
	// The put's reconcile, then the delete's.
	waitUntil(t, func() error {
		if n := counts.count(key); !slow.deleted.Load() || n < 2 {
			return fmt.Errorf("%d reconciles of %s, want the put's and the delete's", n, key)
		}
		return nil
	})
	// A Deployment created now is the watch's last event: every event
	// before it has been seen once it arrives.
	sentinel := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "sentinel"},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "sentinel"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "sentinel"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "example.invalid/c"}}},
			},
		},
	}}
	if _, err := e.dyn.Resource(deployments).Namespace(e.ns).Create(context.Background(), sentinel, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for ev := range w.ResultChan() {
		u, ok := ev.Object.(*unstructured.Unstructured)
		switch {
		case !ok:
			t.Fatalf("watch: %v", ev.Object)
		case u.GetName() == "brief":
			t.Fatalf("Deployment brief %s although its component was deleted before the Deployment was applied", ev.Type)
		case u.GetName() == "sentinel":
			return
		}
	}
	t.Fatal("the watch ended before the sentinel arrived")
}

// replaying answers the watch and the guard's read of key as a mirror
// still copying the hub's bucket does: with an older revision old, until
// release is closed.
type replaying struct {
	reconcile.Specs
	key     string
	old     reconcile.Entry
	release chan struct{}
}

func (r *replaying) released() bool {
	select {
	case <-r.release:
		return true
	default:
		return false
	}
}

func (r *replaying) Latest(ctx context.Context, key string) (reconcile.Entry, bool, error) {
	if key == r.key && !r.released() {
		return r.old, true, nil
	}
	return r.Specs.Latest(ctx, key)
}

func (r *replaying) Watch(ctx context.Context) (reconcile.SpecWatch, error) {
	inner, err := r.Specs.Watch(ctx)
	if err != nil {
		return nil, err
	}
	w := &replayWatch{SpecWatch: inner, out: make(chan reconcile.Event, 64)}
	go func() {
		defer close(w.out)
		var held *reconcile.Event
		release := r.release
		for {
			select {
			case ev, ok := <-inner.Events():
				if !ok {
					return
				}
				if ev.Key == r.key && held == nil && release != nil {
					h := ev
					held, ev.Entry = &h, r.old
				}
				w.out <- ev
			case <-release:
				release = nil
				if held != nil {
					w.out <- *held
				}
			}
		}
	}()
	return w, nil
}

type replayWatch struct {
	reconcile.SpecWatch
	out chan reconcile.Event
}

func (w *replayWatch) Events() <-chan reconcile.Event { return w.out }

func TestAnOlderRevisionReadAfterANewerOneWasAppliedIsHeld(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.start()
	comp := e.component("steady")
	key := api.KeyOf(defaults.Apply(comp))
	rev1 := e.publish(comp)
	e.waitStatus("steady", api.ConditionApplied, "True", rev1)
	comp.Spec.Image += "-2"
	rev2 := e.publish(comp)
	e.waitStatus("steady", api.ConditionApplied, "True", rev2)
	old, err := e.specs.GetRevision(context.Background(), key, rev1)
	if err != nil {
		t.Fatal(err)
	}

	// Restarted on a bucket that answers with revision 1 (a mirror rebuilt
	// while the cluster's store was lost, still copying).
	e.halt()
	r := &replaying{key: key, old: reconcile.Entry{Key: key, Revision: rev1, Value: old.Value}, release: make(chan struct{})}
	e.specsOf = func(s reconcile.Specs) reconcile.Specs { r.Specs = s; return r }
	e.start()
	rec := e.waitStatus("steady", api.ConditionStalled, "True", rev2)
	if !strings.Contains(rec.Error, fmt.Sprintf("revision %d is older than revision %d", rev1, rev2)) {
		t.Errorf("status error %q, want it to say revision %d is older than %d", rec.Error, rev1, rev2)
	}
	if got := e.get(deployments, "steady").GetAnnotations()[render.AnnotationRevision]; got != fmt.Sprint(rev2) {
		t.Fatalf("Deployment at revision %s while the bucket answered with %d, want %d kept", got, rev1, rev2)
	}

	// The copy completes: the newer revision is the cluster's again.
	close(r.release)
	e.waitStatus("steady", api.ConditionStalled, "False", rev2)
	e.waitStatus("steady", api.ConditionApplied, "True", rev2)
}
