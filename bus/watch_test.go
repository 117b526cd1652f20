package bus_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testenv"
)

// recorder collects a watcher's events in the background.
type recorder struct {
	mu     sync.Mutex
	events []bus.Event
}

func record(w *bus.Watcher) *recorder {
	r := &recorder{}
	go func() {
		for ev := range w.Events() {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		}
	}()
	return r
}

// lines renders the events as "op key=value" (or "initial-done").
func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.events))
	for _, ev := range r.events {
		if ev.InitialDone {
			out = append(out, "initial-done")
			continue
		}
		out = append(out, fmt.Sprintf("%s %s=%s", ev.Op, ev.Key, ev.Value))
	}
	return out
}

// waitFor waits until the recorded lines equal want.
func (r *recorder) waitFor(t *testing.T, within time.Duration, want ...string) {
	t.Helper()
	testenv.Eventually(t, within, func() error {
		if got := r.lines(); !slices.Equal(got, want) {
			return fmt.Errorf("events:\n got  %v\n want %v", got, want)
		}
		return nil
	})
}

func TestWatchDeliversInitialValuesThenMarkerThenChangesInOrder(t *testing.T) {
	t.Parallel()
	s := testenv.NATS(t)
	ctx := testCtx(t, 20*time.Second)
	specs := openSpecs(t, connect(t, configFor(s), nil))
	_, err := specs.Put(ctx, "ns.a", []byte("a1"))
	must(t, err)
	_, err = specs.Put(ctx, "ns.a", []byte("a2"))
	must(t, err)
	_, err = specs.Put(ctx, "ns.gone", []byte("g1"))
	must(t, err)
	must(t, specs.Delete(ctx, "ns.gone", 0))

	w, err := specs.Watch(ctx, bus.WatchOptions{})
	must(t, err)
	defer w.Stop()
	rec := record(w)
	rec.waitFor(t, 5*time.Second, "put ns.a=a2", "delete ns.gone=", "initial-done")

	_, err = specs.Put(ctx, "ns.b", []byte("b1"))
	must(t, err)
	must(t, specs.Purge(ctx, "ns.a", 0))
	_, err = specs.Put(ctx, "ns.b", []byte("b2"))
	must(t, err)
	rec.waitFor(t, 5*time.Second, "put ns.a=a2", "delete ns.gone=", "initial-done",
		"put ns.b=b1", "purge ns.a=", "put ns.b=b2")
}

func TestWatchResumesAfterARevisionWithoutReplay(t *testing.T) {
	t.Parallel()
	s := testenv.NATS(t)
	ctx := testCtx(t, 20*time.Second)
	specs := openSpecs(t, connect(t, configFor(s), nil))
	_, err := specs.Put(ctx, "ns.a", []byte("a1"))
	must(t, err)
	seen, err := specs.Put(ctx, "ns.b", []byte("b1"))
	must(t, err)
	_, err = specs.Put(ctx, "ns.a", []byte("a2"))
	must(t, err)
	_, err = specs.Put(ctx, "ns.a", []byte("a3"))
	must(t, err)

	w, err := specs.Watch(ctx, bus.WatchOptions{AfterRevision: seen, Keys: []string{"ns.a"}})
	must(t, err)
	defer w.Stop()
	record(w).waitFor(t, 5*time.Second, "put ns.a=a2", "put ns.a=a3", "initial-done")
}

func TestWatchSurvivesServerRestartAndOutageWithoutLossReplayOrLeaks(t *testing.T) {
	t.Parallel()
	s := testenv.NATS(t)
	ctx := testCtx(t, 45*time.Second)
	var connected sync.Mutex
	up := true
	watchConn := connect(t, configFor(s), func(sc bus.StateChange) {
		connected.Lock()
		defer connected.Unlock()
		up = sc.State == bus.StateConnected || sc.State == bus.StateReconnected
	})
	specs := openSpecs(t, watchConn)
	keys := []string{"ns.k0", "ns.k1", "ns.k2", "ns.k3"}
	var want []string
	writeAll := func(round int) (last uint64) {
		t.Helper()
		writer := openSpecs(t, connect(t, configFor(s), nil))
		for _, k := range keys {
			rev, err := writer.Put(ctx, k, fmt.Appendf(nil, "v%d", round))
			must(t, err)
			want = append(want, fmt.Sprintf("put %s=v%d", k, round))
			last = rev
		}
		return last
	}

	writeAll(0)
	want = append(want, "initial-done")
	w, err := specs.Watch(ctx, bus.WatchOptions{Backoff: fastBackoff})
	must(t, err)
	defer w.Stop()
	rec := record(w)
	rec.waitFor(t, 5*time.Second, want...)

	writeAll(1)
	s.Restart(t)
	writeAll(2) // from a fresh client, likely before the watcher reconnects
	rec.waitFor(t, 10*time.Second, want...)

	beforeOutage := writeAll(3)
	rec.waitFor(t, 5*time.Second, want...)
	s.Shutdown()
	testenv.Eventually(t, 5*time.Second, func() error {
		connected.Lock()
		defer connected.Unlock()
		if up {
			return fmt.Errorf("watcher's client still reports connected")
		}
		return nil
	})
	select { // a deliberate outage of 5s, not a wait for a condition
	case <-time.After(5 * time.Second):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	s.Restart(t)
	writeAll(4)
	rec.waitFor(t, 10*time.Second, want...)

	if w.Restarts() < 2 {
		t.Fatalf("watch re-created %d times, want at least 2 (restart and outage)", w.Restarts())
	}
	admin := connect(t, configFor(s), nil)
	var live []*jetstream.ConsumerInfo
	testenv.Eventually(t, 15*time.Second, func() error {
		var err error
		live, err = consumers(ctx, admin, kvStream(specs.Bucket()))
		if err != nil || len(live) != 1 {
			return fmt.Errorf("consumers on the spec stream: %d (%v), want 1", len(live), err)
		}
		return nil
	})
	// The surviving consumer resumed after what was delivered before the
	// outage: it did not replay the bucket.
	if cfg := live[0].Config; cfg.DeliverPolicy != jetstream.DeliverByStartSequencePolicy || cfg.OptStartSeq <= beforeOutage {
		t.Fatalf("live consumer starts with %s at %d, want by_start_sequence after %d", cfg.DeliverPolicy, cfg.OptStartSeq, beforeOutage)
	}
	assertPerKeyOrder(t, rec.lines(), keys, 5)
}

// assertPerKeyOrder checks every key saw v0..v(rounds-1) once, in order.
func assertPerKeyOrder(t *testing.T, lines, keys []string, rounds int) {
	t.Helper()
	for _, k := range keys {
		var got []string
		for _, l := range lines {
			if strings.HasPrefix(l, "put "+k+"=") {
				got = append(got, strings.TrimPrefix(l, "put "+k+"="))
			}
		}
		var want []string
		for r := range rounds {
			want = append(want, fmt.Sprintf("v%d", r))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("key %s: got %v, want %v", k, got, want)
		}
	}
}
