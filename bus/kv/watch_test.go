package kv_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus/kv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

func TestWatchDeliversInitialValuesThenMarkerThenChangesInOrder(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	specs := natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil))
	_, err := specs.Put(ctx, "ns.a", []byte("a1"))
	testenv.Must(t, err)
	_, err = specs.Put(ctx, "ns.a", []byte("a2"))
	testenv.Must(t, err)
	_, err = specs.Put(ctx, "ns.gone", []byte("g1"))
	testenv.Must(t, err)
	testenv.Must(t, specs.Delete(ctx, "ns.gone", 0))

	w, err := specs.Watch(ctx, kv.WatchOptions{})
	testenv.Must(t, err)
	defer w.Stop()
	rec := natstest.RecordWatch(w)
	rec.WaitFor(t, 5*time.Second, "put ns.a=a2", "delete ns.gone=", "initial-done")

	_, err = specs.Put(ctx, "ns.b", []byte("b1"))
	testenv.Must(t, err)
	testenv.Must(t, specs.Purge(ctx, "ns.a", 0))
	_, err = specs.Put(ctx, "ns.b", []byte("b2"))
	testenv.Must(t, err)
	rec.WaitFor(t, 5*time.Second, "put ns.a=a2", "delete ns.gone=", "initial-done",
		"put ns.b=b1", "purge ns.a=", "put ns.b=b2")
}

func TestWatchResumesAfterARevisionWithoutReplay(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	specs := natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil))
	_, err := specs.Put(ctx, "ns.a", []byte("a1"))
	testenv.Must(t, err)
	seen, err := specs.Put(ctx, "ns.b", []byte("b1"))
	testenv.Must(t, err)
	_, err = specs.Put(ctx, "ns.a", []byte("a2"))
	testenv.Must(t, err)
	_, err = specs.Put(ctx, "ns.a", []byte("a3"))
	testenv.Must(t, err)

	w, err := specs.Watch(ctx, kv.WatchOptions{AfterRevision: seen, Keys: []string{"ns.a"}})
	testenv.Must(t, err)
	defer w.Stop()
	natstest.RecordWatch(w).WaitFor(t, 5*time.Second, "put ns.a=a2", "put ns.a=a3", "initial-done")
}

func TestWatchSurvivesServerRestartAndOutageWithoutLossReplayOrLeaks(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 45*time.Second)
	var connected sync.Mutex
	up := true
	watchConn := natstest.BusConnect(t, s.BusConfig(), func(sc bus.StateChange) {
		connected.Lock()
		defer connected.Unlock()
		up = sc.State == bus.StateConnected || sc.State == bus.StateReconnected
	})
	specs := natstest.OpenSpecs(t, watchConn)
	keys := []string{"ns.k0", "ns.k1", "ns.k2", "ns.k3"}
	var want []string
	writeAll := func(round int) (last uint64) {
		t.Helper()
		writer := natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil))
		for _, k := range keys {
			rev, err := writer.Put(ctx, k, fmt.Appendf(nil, "v%d", round))
			testenv.Must(t, err)
			want = append(want, fmt.Sprintf("put %s=v%d", k, round))
			last = rev
		}
		return last
	}

	writeAll(0)
	want = append(want, "initial-done")
	w, err := specs.Watch(ctx, kv.WatchOptions{Backoff: natstest.FastBackoff})
	testenv.Must(t, err)
	defer w.Stop()
	rec := natstest.RecordWatch(w)
	rec.WaitFor(t, 5*time.Second, want...)

	writeAll(1)
	s.Restart(t)
	writeAll(2) // from a fresh client, likely before the watcher reconnects
	rec.WaitFor(t, 10*time.Second, want...)

	beforeOutage := writeAll(3)
	rec.WaitFor(t, 5*time.Second, want...)
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
	rec.WaitFor(t, 10*time.Second, want...)

	if w.Restarts() < 2 {
		t.Fatalf("watch re-created %d times, want at least 2 (restart and outage)", w.Restarts())
	}
	admin := natstest.BusConnect(t, s.BusConfig(), nil)
	var live []*jetstream.ConsumerInfo
	testenv.Eventually(t, 15*time.Second, func() error {
		var err error
		live, err = consumers(ctx, admin, kvStream(specs.Name()))
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
	assertPerKeyOrder(t, rec.Lines(), keys, 5)
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

// consumers asks the server for the consumers of a stream.
func consumers(ctx context.Context, c *bus.Conn, stream string) ([]*jetstream.ConsumerInfo, error) {
	st, err := c.JetStream().Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	var out []*jetstream.ConsumerInfo
	list := st.ListConsumers(ctx)
	for info := range list.Info() {
		out = append(out, info)
	}
	return out, list.Err()
}

// kvStream is the stream behind a KV bucket.
func kvStream(bucket string) string { return "KV_" + bucket }
