package status_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"

	"github.com/google/go-cmp/cmp"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

func TestHeartbeatStale(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	beat := func(age time.Duration) *status.HeartbeatRecord {
		return &status.HeartbeatRecord{Heartbeat: cluster.Heartbeat{TTLSeconds: 10}, Received: now.Add(-age)}
	}
	cases := map[string]struct {
		hb    *status.HeartbeatRecord
		stale bool
	}{
		"no heartbeat is stale":              {nil, true},
		"a fresh heartbeat is live":          {beat(time.Second), false},
		"a heartbeat at its ttl is live":     {beat(10 * time.Second), false},
		"a heartbeat past its ttl is stale":  {beat(10*time.Second + time.Millisecond), true},
		"a heartbeat from the future counts": {beat(-time.Second), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := status.Stale(tc.hb, now); got != tc.stale {
				t.Fatalf("stale = %v, want %v", got, tc.stale)
			}
		})
	}
}

// fakeClock is a settable clock for StatusConfig.Now.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestStatusRoundTripsAndListsWithStaleness(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	clock := &fakeClock{now: time.Now()}
	store, err := status.Open(ctx, natstest.BusConnect(t, s.BusConfig(), nil), status.Config{Now: clock.Now}, kv.Ensure)
	testenv.Must(t, err)

	east := api.Status{
		Component: "workers.extractor", Cluster: "east", ObservedRevision: 7,
		Conditions: []api.Condition{{Type: "Ready", Status: api.ConditionTrue, Reason: "Applied",
			Message: "all children applied", LastTransitionTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}},
		Children: []api.Child{{Kind: "Deployment", Namespace: "workers", Name: "extractor", Hash: "abc"}},
	}
	west := east
	west.Cluster, west.Error = "west", "apply failed"
	for _, st := range []api.Status{east, west} {
		_, err := store.Put(ctx, st)
		testenv.Must(t, err)
	}
	_, err = store.Beat(ctx, cluster.Heartbeat{Cluster: "east", Controller: "controller-0"}, 10*time.Second)
	testenv.Must(t, err)

	got, err := store.Get(ctx, "workers.extractor", "east")
	testenv.Must(t, err)
	east.UpdatedAt = got.UpdatedAt
	if diff := cmp.Diff(east, got.Status); diff != "" || got.Stale {
		t.Fatalf("east status (-want +got):\n%s stale=%v", diff, got.Stale)
	}
	list, err := store.List(ctx)
	testenv.Must(t, err)
	if len(list) != 2 || list[0].Cluster != "east" || list[0].Stale || list[1].Cluster != "west" || !list[1].Stale {
		t.Fatalf("list: want east live and west (no heartbeat) stale, got %+v", list)
	}
	second := east
	second.Component = "workers.loader"
	_, err = store.Put(ctx, second)
	testenv.Must(t, err)
	clusters, err := store.Clusters(ctx)
	testenv.Must(t, err)
	if diff := cmp.Diff(map[string]bool{"east": false, "west": true}, clusters); diff != "" {
		t.Fatalf("clusters and their staleness (-want +got):\n%s", diff)
	}

	clock.Add(11 * time.Second) // past east's ttl by the reader's clock
	got, err = store.Get(ctx, "workers.extractor", "east")
	testenv.Must(t, err)
	if !got.Stale {
		t.Fatal("east still live 11s after a heartbeat with a 10s ttl")
	}
	if clusters, err = store.Clusters(ctx); err != nil || !clusters["east"] || len(clusters) != 2 {
		t.Fatalf("clusters 11s after east's heartbeat: %v, %v; want both stale", clusters, err)
	}
	if _, err := store.Put(ctx, api.Status{Component: "workers", Cluster: "east"}); err == nil {
		t.Fatal("a component without a namespace was accepted")
	}
}

func TestStatusReadsStaleWithinTTLWhenHeartbeatsStop(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	store, err := status.Open(ctx, natstest.BusConnect(t, s.BusConfig(), nil), status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	_, err = store.Put(ctx, api.Status{Component: "workers.extractor", Cluster: "east", ObservedRevision: 1})
	testenv.Must(t, err)

	const ttl = 2 * time.Second
	beatCtx, stopBeating := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- store.RunHeartbeat(beatCtx, status.HeartbeatOptions{Heartbeat: cluster.Heartbeat{Cluster: "east"}, Interval: 300 * time.Millisecond, TTL: ttl})
	}()
	testenv.Eventually(t, 5*time.Second, func() error {
		rec, err := store.Get(ctx, "workers.extractor", "east")
		if err != nil || rec.Stale {
			return fmt.Errorf("east not live yet: %v", err)
		}
		return nil
	})
	stopBeating()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("RunHeartbeat returned %v, want context.Canceled", err)
	}
	last, err := store.Heartbeat(ctx, "east")
	testenv.Must(t, err)

	testenv.Eventually(t, ttl+time.Second, func() error {
		rec, err := store.Get(ctx, "workers.extractor", "east")
		if err != nil || !rec.Stale {
			return fmt.Errorf("east still live (%v)", err)
		}
		return nil
	})
	if late := time.Since(last.Received) - ttl; late > 200*time.Millisecond {
		t.Fatalf("status turned stale %s after the heartbeat's ttl ran out", late)
	}
	testenv.Eventually(t, 5*time.Second, func() error {
		if _, err := store.Heartbeat(ctx, "east"); !errors.Is(err, bus.ErrNotFound) {
			return fmt.Errorf("server still holds the heartbeat (%v)", err)
		}
		return nil
	})
}

// A reader whose wall clock is far from the server's still judges
// heartbeats by the server's clock, which stamped them: a laptop an hour
// ahead does not see live clusters stale, one an hour behind does not see
// expired ones live, and time passing on the reader's clock still counts.
func TestStalenessIsJudgedByTheServersClockNotTheReaders(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	writer, err := status.Open(ctx, natstest.BusConnect(t, s.BusConfig(), nil), status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	_, err = writer.Put(ctx, api.Status{Component: "workers.extractor", Cluster: "east", ObservedRevision: 1})
	testenv.Must(t, err)
	_, err = writer.Beat(ctx, cluster.Heartbeat{Cluster: "east"}, 30*time.Second)
	testenv.Must(t, err)

	for _, skew := range []time.Duration{time.Hour, -time.Hour} {
		clock := &fakeClock{now: time.Now().Add(skew)}
		reader, err := status.Open(ctx, natstest.BusConnect(t, s.BusConfig(), nil), status.Config{Now: clock.Now}, kv.Existing)
		testenv.Must(t, err)
		list, err := reader.List(ctx)
		testenv.Must(t, err)
		if len(list) != 1 || list[0].Stale {
			t.Fatalf("reader %s off: want east live, got %+v", skew, list)
		}
		if off := time.Until(reader.Now()); off > 5*time.Second || off < -5*time.Second {
			t.Fatalf("reader %s off: its estimate of the server's clock is %s off", skew, off)
		}
		clock.Add(31 * time.Second) // past the heartbeat's ttl on the reader's clock
		rec, err := reader.Get(ctx, "workers.extractor", "east")
		testenv.Must(t, err)
		if !rec.Stale {
			t.Fatalf("reader %s off: east still live 31s after a heartbeat with a 30s ttl", skew)
		}
	}
}

// TestWritesAreCheckedAgainstTheRevision: Write and Remove land only at
// the record's latest revision (0: never written); a record written since
// fails them with the revision it is at, and stays as it was.
func TestWritesAreCheckedAgainstTheRevision(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	store, err := status.Open(ctx, natstest.BusConnect(t, s.BusConfig(), nil), status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	st := api.Status{Component: "workers.extractor", Cluster: "east", ObservedRevision: 1}

	first, err := store.Write(ctx, st, 0)
	testenv.Must(t, err)
	st.ObservedRevision = 2
	newer, err := store.Write(ctx, st, first) // a newer leader
	testenv.Must(t, err)
	late := st
	late.ObservedRevision = 1
	_, err = store.Write(ctx, late, first) // a late write against what it last saw
	var moved *bus.RevisionMismatchError
	if !errors.As(err, &moved) || moved.Current != newer {
		t.Fatalf("a write at revision %d of a record at %d: %v, want a mismatch naming %d", first, newer, err, newer)
	}
	if _, err := store.Remove(ctx, st.Component, st.Cluster, first); !errors.As(err, &moved) {
		t.Fatalf("a remove at an old revision: %v, want a mismatch", err)
	}
	got, err := store.Get(ctx, st.Component, st.Cluster)
	testenv.Must(t, err)
	if got.ObservedRevision != 2 || got.Revision != newer {
		t.Fatalf("the record is at revision %d observing %d, want the newer write's %d observing 2", got.Revision, got.ObservedRevision, newer)
	}
	marker, err := store.Remove(ctx, st.Component, st.Cluster, newer)
	testenv.Must(t, err)
	if _, err := store.Write(ctx, st, 0); !errors.As(err, &moved) || moved.Current != marker {
		t.Fatalf("a write as if never written over a removed record: %v, want a mismatch naming the marker %d", err, marker)
	}
	_, err = store.Write(ctx, st, marker)
	testenv.Must(t, err)
}
