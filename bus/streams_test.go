package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testenv"
)

// workQueue is a stream and consumer like the ones render produces.
func workQueue() (jetstream.StreamConfig, jetstream.ConsumerConfig) {
	return jetstream.StreamConfig{
			Name:       "TINYCTL_workers_extractor",
			Subjects:   []string{"jobs.extract.>"},
			Retention:  jetstream.WorkQueuePolicy,
			Storage:    jetstream.FileStorage,
			MaxAge:     24 * time.Hour,
			Duplicates: 2 * time.Minute,
		}, jetstream.ConsumerConfig{
			Durable:       "extractor",
			AckPolicy:     jetstream.AckExplicitPolicy,
			MaxDeliver:    5,
			MaxAckPending: 1000,
			BackOff:       []time.Duration{time.Second, 10 * time.Second, time.Minute},
		}
}

type streamEnv struct {
	ctx context.Context
	js  jetstream.JetStream
	m   *bus.StreamManager
}

func newStreamEnv(t *testing.T) streamEnv {
	t.Helper()
	s := testenv.NATS(t)
	c := connect(t, configFor(s), nil)
	return streamEnv{ctx: testCtx(t, 20*time.Second), js: c.JetStream(), m: bus.NewStreamManager(c, 4)}
}

func (e streamEnv) ensure(t *testing.T, sc jetstream.StreamConfig, cc jetstream.ConsumerConfig, opts bus.EnsureOptions, want bus.EnsureResult) {
	t.Helper()
	var got bus.EnsureResult
	var err error
	// A transient failure is retried, as the reconciler does: a stream
	// re-created right after a delete can meet the server still removing
	// the old store.
	testenv.Eventually(t, 10*time.Second, func() error {
		got, err = e.m.EnsureStreamAndConsumer(e.ctx, sc, cc, opts)
		if bus.IsTransient(err) {
			return err
		}
		return nil
	})
	if err != nil || got != want {
		t.Fatalf("ensure: got %+v (%v), want %+v", got, err, want)
	}
}

func TestEnsureCreatesOnceThenChangesNothing(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, bus.EnsureOptions{}, bus.EnsureResult{Stream: bus.Created, Consumer: bus.Created})
	before := consumerInfo(t, e, sc.Name, cc.Durable)
	e.ensure(t, sc, cc, bus.EnsureOptions{}, bus.EnsureResult{Stream: bus.Unchanged, Consumer: bus.Unchanged})
	if after := consumerInfo(t, e, sc.Name, cc.Durable); !after.Created.Equal(before.Created) {
		t.Fatal("the consumer was re-created")
	}
}

func TestEnsureRecreatesAStreamDeletedBehindItsBack(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, bus.EnsureOptions{}, bus.EnsureResult{Stream: bus.Created, Consumer: bus.Created})
	must(t, e.js.DeleteStream(e.ctx, sc.Name))
	e.ensure(t, sc, cc, bus.EnsureOptions{}, bus.EnsureResult{Stream: bus.Created, Consumer: bus.Created})
}

func TestEnsureCorrectsDriftInPlaceKeepingTheConsumerPosition(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, bus.EnsureOptions{}, bus.EnsureResult{Stream: bus.Created, Consumer: bus.Created})
	for range 3 {
		_, err := e.js.Publish(e.ctx, "jobs.extract.pdf", []byte("job"))
		must(t, err)
	}
	cons, err := e.js.Consumer(e.ctx, sc.Name, cc.Durable)
	must(t, err)
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	must(t, err)
	for msg := range batch.Messages() {
		must(t, msg.DoubleAck(e.ctx))
	}

	drifted, driftedCons := sc, cc
	drifted.MaxAge = time.Hour
	driftedCons.MaxAckPending = 5
	_, err = e.js.UpdateStream(e.ctx, drifted)
	must(t, err)
	_, err = e.js.UpdateConsumer(e.ctx, sc.Name, driftedCons)
	must(t, err)

	e.ensure(t, sc, cc, bus.EnsureOptions{}, bus.EnsureResult{Stream: bus.Updated, Consumer: bus.Updated})
	info := consumerInfo(t, e, sc.Name, cc.Durable)
	if info.Config.MaxAckPending != cc.MaxAckPending || info.AckFloor.Stream != 1 || info.NumPending != 2 {
		t.Fatalf("after ensure: max ack pending %d, ack floor %d, pending %d; want %d, 1, 2",
			info.Config.MaxAckPending, info.AckFloor.Stream, info.NumPending, cc.MaxAckPending)
	}
	e.ensure(t, sc, cc, bus.EnsureOptions{}, bus.EnsureResult{Stream: bus.Unchanged, Consumer: bus.Unchanged})
}

func TestEnsureReportsDriftTheServerCannotUpdate(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, bus.EnsureOptions{}, bus.EnsureResult{Stream: bus.Created, Consumer: bus.Created})
	must(t, e.js.DeleteConsumer(e.ctx, sc.Name, cc.Durable))
	other := cc
	other.ReplayPolicy = jetstream.ReplayOriginalPolicy // cannot be changed in place
	_, err := e.js.CreateConsumer(e.ctx, sc.Name, other)
	must(t, err)

	_, err = e.m.EnsureStreamAndConsumer(e.ctx, sc, cc, bus.EnsureOptions{})
	var drift *bus.DriftError
	if !errors.As(err, &drift) || bus.IsTransient(err) {
		t.Fatalf("got %v, want a permanent *DriftError", err)
	}
	if got := consumerInfo(t, e, sc.Name, cc.Durable).Config.ReplayPolicy; got != jetstream.ReplayOriginalPolicy {
		t.Fatalf("the drifted consumer was changed (replay policy %s) without being asked", got)
	}
	e.ensure(t, sc, cc, bus.EnsureOptions{RecreateConsumer: true}, bus.EnsureResult{Stream: bus.Unchanged, Consumer: bus.Recreated})

	memory := sc
	memory.Name, memory.Subjects, memory.Storage = "TINYCTL_mem", []string{"jobs.mem.>"}, jetstream.MemoryStorage
	_, err = e.js.CreateStream(e.ctx, memory)
	must(t, err)
	memory.Storage = jetstream.FileStorage
	if _, err := e.m.EnsureStream(e.ctx, memory); !errors.As(err, &drift) || drift.Diffs[0].Field != "storage" {
		t.Fatalf("storage drift: got %v, want a *DriftError on storage", err)
	}
}

func TestDeleteFollowsTheDeletionPolicy(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, bus.EnsureOptions{}, bus.EnsureResult{Stream: bus.Created, Consumer: bus.Created})
	cases := []struct {
		policy bus.DeletionPolicy
		want   bus.Action
	}{
		{bus.DeletionRetain, bus.Retained},
		{"", bus.Retained},
		{bus.DeletionDelete, bus.Deleted},
		{bus.DeletionDelete, bus.Absent},
	}
	for _, tc := range cases {
		if got, err := e.m.Delete(e.ctx, sc.Name, tc.policy); err != nil || got != tc.want {
			t.Fatalf("delete with %q: got %s (%v), want %s", tc.policy, got, err, tc.want)
		}
	}
	if _, err := e.js.Stream(e.ctx, sc.Name); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("stream still there after Delete: %v", err)
	}
	if _, err := e.m.Delete(e.ctx, sc.Name, "Sometimes"); err == nil {
		t.Fatal("unknown policy accepted")
	}
}

func consumerInfo(t *testing.T, e streamEnv, stream, name string) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := e.js.Consumer(e.ctx, stream, name)
	must(t, err)
	info, err := c.Info(e.ctx)
	must(t, err)
	return info
}
