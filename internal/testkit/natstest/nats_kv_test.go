package natstest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// nextEntry reads one watch update (nil is the initial-values marker).
func nextEntry(ctx context.Context, t *testing.T, w jetstream.KeyWatcher) jetstream.KeyValueEntry {
	t.Helper()
	select {
	case e, ok := <-w.Updates():
		if !ok {
			t.Fatal("watcher closed")
		}
		return e
	case <-ctx.Done():
		t.Fatal("no watch update before the deadline")
		return nil
	}
}

func expectEntry(ctx context.Context, t *testing.T, w jetstream.KeyWatcher, key, value string, op jetstream.KeyValueOp) uint64 {
	t.Helper()
	e := nextEntry(ctx, t, w)
	if e == nil {
		t.Fatalf("got the initial-values marker, want %s %s=%q", op, key, value)
	}
	if e.Key() != key || string(e.Value()) != value || e.Operation() != op {
		t.Fatalf("got %s %s=%q, want %s %s=%q", e.Operation(), e.Key(), e.Value(), op, key, value)
	}
	return e.Revision()
}

func TestNATSKVPutWatchDeleteAcrossRestart(t *testing.T) {
	t.Parallel()
	s := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The watcher's client waits 2s between reconnect attempts, so a client
	// that connects right after the restart writes before it is back.
	watcherConn := s.Connect(t, nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(func(int) time.Duration { return 2 * time.Second }))
	kv := newKV(ctx, t, watcherConn, true)
	w, err := kv.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e := nextEntry(ctx, t, w); e != nil {
		t.Fatalf("empty bucket: want the initial-values marker first, got %s", e.Key())
	}
	if _, err := kv.Put(ctx, "ns.a", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	expectEntry(ctx, t, w, "ns.a", "v1", jetstream.KeyValuePut)
	if err := kv.Delete(ctx, "ns.a"); err != nil {
		t.Fatal(err)
	}
	last := expectEntry(ctx, t, w, "ns.a", "", jetstream.KeyValueDelete)

	s.Restart(t)
	writer := newKV(ctx, t, s.Connect(t), false)
	putRev := putWhenReady(ctx, t, writer, "ns.a", "v2")
	if st := watcherConn.Status(); st == nats.CONNECTED {
		t.Fatalf("watcher's client reconnected before the write; the test proves nothing")
	}

	testenv.Eventually(t, 10*time.Second, func() error {
		if st := watcherConn.Status(); st != nats.CONNECTED {
			return fmt.Errorf("watcher's client is %s", st)
		}
		return nil
	})
	// The old watcher's consumer died with the server: Stop may say so.
	if err := w.Stop(); err != nil && !errors.Is(err, nats.ErrConsumerNotFound) {
		t.Fatalf("stop the old watcher: %v", err)
	}
	w2, err := kv.WatchAll(ctx, jetstream.ResumeFromRevision(last+1))
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	if got := expectEntry(ctx, t, w2, "ns.a", "v2", jetstream.KeyValuePut); got != putRev {
		t.Fatalf("resumed watch delivered revision %d, want %d", got, putRev)
	}
	if e := nextEntry(ctx, t, w2); e != nil {
		t.Fatalf("want the initial-values marker after the resumed entries, got %s", e.Key())
	}
	if err := writer.Delete(ctx, "ns.a"); err != nil {
		t.Fatal(err)
	}
	expectEntry(ctx, t, w2, "ns.a", "", jetstream.KeyValueDelete)
}

// putWhenReady retries a put while JetStream is still recovering its
// streams after a restart.
func putWhenReady(ctx context.Context, t *testing.T, kv jetstream.KeyValue, key, value string) uint64 {
	t.Helper()
	var rev uint64
	testenv.Eventually(t, 10*time.Second, func() error {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		r, err := kv.Put(pctx, key, []byte(value))
		if err != nil {
			return err
		}
		rev = r
		return nil
	})
	if rev == 0 {
		t.Fatal(errors.New("put returned revision 0"))
	}
	return rev
}

func TestNATSRestartKeepsPortsAndStore(t *testing.T) {
	t.Parallel()
	s := Start(t)
	url, monitor := s.URL(), s.MonitorURL()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kv := newKV(ctx, t, s.Connect(t), true)
	if _, err := kv.Put(ctx, "ns.kept", []byte("yes")); err != nil {
		t.Fatal(err)
	}
	s.Restart(t)
	if s.URL() != url || s.MonitorURL() != monitor {
		t.Fatalf("ports changed: %s %s -> %s %s", url, monitor, s.URL(), s.MonitorURL())
	}
	fresh := newKV(ctx, t, s.Connect(t), false)
	e, err := fresh.Get(ctx, "ns.kept")
	if err != nil || string(e.Value()) != "yes" {
		t.Fatalf("value lost across restart: %v", err)
	}
}
