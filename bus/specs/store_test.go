package specs_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

func TestSpecStoreUpdateRaceExactlyOneWins(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	a := natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil))
	b := natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil))
	rev, err := a.Create(ctx, "workers.extractor", []byte("v0"))
	if err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		results := make([]error, 2)
		revs := make([]uint64, 2)
		var start, done sync.WaitGroup
		start.Add(1)
		for i, store := range []*specs.Store{a, b} {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				revs[i], results[i] = store.Update(ctx, "workers.extractor", fmt.Appendf(nil, "round %d writer %d", round, i), rev)
			}()
		}
		start.Done()
		done.Wait()
		winner, loser := 0, 1
		if results[0] != nil {
			winner, loser = 1, 0
		}
		if results[winner] != nil {
			t.Fatalf("round %d: both writers failed: %v / %v", round, results[0], results[1])
		}
		var mismatch *bus.RevisionMismatchError
		if !errors.As(results[loser], &mismatch) {
			t.Fatalf("round %d: loser got %v, want *RevisionMismatchError", round, results[loser])
		}
		if mismatch.Expected != rev || mismatch.Current != revs[winner] {
			t.Fatalf("round %d: mismatch expected=%d current=%d, want %d and the winner's %d",
				round, mismatch.Expected, mismatch.Current, rev, revs[winner])
		}
		rev = revs[winner]
	}
}

func TestSpecStoreKeepsHistoryAcrossDeleteAndRollsBack(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	specs := natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil))
	const key = "workers.extractor"

	r1, err := specs.Create(ctx, key, []byte("v1"))
	testenv.Must(t, err)
	if _, err := specs.Create(ctx, key, []byte("again")); !errors.Is(err, bus.ErrExists) {
		t.Fatalf("second create: got %v, want ErrExists", err)
	}
	r2, err := specs.Put(ctx, key, []byte("v2"))
	testenv.Must(t, err)
	if _, err := specs.Update(ctx, key, []byte("stale"), r1); !errors.Is(err, bus.ErrRevisionMismatch) {
		t.Fatalf("update at an old revision: got %v, want ErrRevisionMismatch", err)
	}
	_, err = specs.Put(ctx, "workers.other", []byte("o1"))
	testenv.Must(t, err)

	assertValue(t, specs, key, "v2", r2)
	old, err := specs.GetRevision(ctx, key, r1)
	testenv.Must(t, err)
	if string(old.Value) != "v1" {
		t.Fatalf("revision %d holds %q, want v1", r1, old.Value)
	}
	assertKeys(t, specs, key, "workers.other")

	testenv.Must(t, specs.Delete(ctx, key, 0))
	if _, err := specs.Get(ctx, key); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("get after delete: got %v, want ErrNotFound", err)
	}
	assertKeys(t, specs, "workers.other")
	assertHistory(t, specs, key, "put:v1", "put:v2", "delete:")

	r4, err := specs.Rollback(ctx, key, r1)
	testenv.Must(t, err)
	assertValue(t, specs, key, "v1", r4)
	assertHistory(t, specs, key, "put:v1", "put:v2", "delete:", "put:v1")

	if err := specs.Delete(ctx, key, r1); !errors.Is(err, bus.ErrRevisionMismatch) {
		t.Fatalf("delete at an old revision: got %v, want ErrRevisionMismatch", err)
	}
	testenv.Must(t, specs.Purge(ctx, key, r4))
	assertHistory(t, specs, key, "purge:")
	if _, err := specs.Create(ctx, key, []byte("v5")); err != nil {
		t.Fatalf("create after purge: %v", err)
	}
}

func TestOpenSpecStoreIsIdempotentAndReportsOtherSettings(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 10*time.Second)
	c := natstest.BusConnect(t, s.BusConfig(), nil)
	natstest.OpenSpecs(t, c)
	natstest.OpenSpecs(t, c)

	_, err := specs.Open(ctx, c, specs.Config{History: 5, Storage: jetstream.MemoryStorage}, kv.Ensure)
	var cfgErr *kv.BucketConfigError
	if !errors.As(err, &cfgErr) || len(cfgErr.Diffs) != 2 {
		t.Fatalf("open with other settings: got %v, want a BucketConfigError with 2 diffs", err)
	}
	// The message says what to do about each setting.
	for _, want := range []string{"history: want 5, have 16", "nats stream edit KV_tinyctl-components --max-msgs-per-subject 5",
		"storage cannot change in place", "configure tinyctl with the bucket's settings"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	kv, err := c.JetStream().KeyValue(ctx, specs.DefaultBucket)
	testenv.Must(t, err)
	st, err := kv.Status(ctx)
	testenv.Must(t, err)
	if st.History() != specs.DefaultHistory {
		t.Fatalf("bucket history changed to %d", st.History())
	}
}

func assertValue(t *testing.T, specs *specs.Store, key, value string, rev uint64) {
	t.Helper()
	e, err := specs.Get(testenv.Ctx(t, 5*time.Second), key)
	testenv.Must(t, err)
	if string(e.Value) != value || e.Revision != rev || e.Op != kv.OpPut || e.Created.IsZero() {
		t.Fatalf("get %s: %q at %d (%s), want %q at %d", key, e.Value, e.Revision, e.Op, value, rev)
	}
}

func assertKeys(t *testing.T, specs *specs.Store, keys ...string) {
	t.Helper()
	list, err := specs.List(testenv.Ctx(t, 5*time.Second))
	testenv.Must(t, err)
	var got []string
	for _, e := range list {
		got = append(got, e.Key)
	}
	if fmt.Sprint(got) != fmt.Sprint(keys) {
		t.Fatalf("list: got %v, want %v", got, keys)
	}
}

func assertHistory(t *testing.T, specs *specs.Store, key string, want ...string) {
	t.Helper()
	h, err := specs.History(testenv.Ctx(t, 5*time.Second), key)
	testenv.Must(t, err)
	var got []string
	for _, e := range h {
		got = append(got, e.Op.String()+":"+string(e.Value))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("history of %s: got %v, want %v", key, got, want)
	}
}
