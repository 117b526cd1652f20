package streams_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/bus/streams"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
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
	m   *streams.Manager
}

func newStreamEnv(t *testing.T) streamEnv {
	t.Helper()
	s := natstest.Start(t)
	c := natstest.BusConnect(t, s.BusConfig(), nil)
	return streamEnv{ctx: testenv.Ctx(t, 20*time.Second), js: c.JetStream(), m: streams.New(c, 4)}
}

func (e streamEnv) ensure(t *testing.T, sc jetstream.StreamConfig, cc jetstream.ConsumerConfig, opts streams.EnsureOptions, want streams.EnsureResult) {
	t.Helper()
	var got streams.EnsureResult
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
	if err != nil || got.Stream != want.Stream || got.Consumer != want.Consumer {
		t.Fatalf("ensure: got %+v (%v), want %+v", got, err, want)
	}
}

func TestEnsureCreatesOnceThenChangesNothing(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Created, Consumer: action.Created})
	before := consumerInfo(t, e, sc.Name, cc.Durable)
	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Unchanged, Consumer: action.Unchanged})
	if after := consumerInfo(t, e, sc.Name, cc.Durable); !after.Created.Equal(before.Created) {
		t.Fatal("the consumer was re-created")
	}
}

func TestEnsureRecreatesAStreamDeletedBehindItsBack(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Created, Consumer: action.Created})
	testenv.Must(t, e.js.DeleteStream(e.ctx, sc.Name))
	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Created, Consumer: action.Created})
}

func TestEnsureCorrectsDriftInPlaceKeepingTheConsumerPosition(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Created, Consumer: action.Created})
	for range 3 {
		_, err := e.js.Publish(e.ctx, "jobs.extract.pdf", []byte("job"))
		testenv.Must(t, err)
	}
	cons, err := e.js.Consumer(e.ctx, sc.Name, cc.Durable)
	testenv.Must(t, err)
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	testenv.Must(t, err)
	for msg := range batch.Messages() {
		testenv.Must(t, msg.DoubleAck(e.ctx))
	}

	drifted, driftedCons := sc, cc
	drifted.MaxAge = time.Hour
	driftedCons.MaxAckPending = 5
	_, err = e.js.UpdateStream(e.ctx, drifted)
	testenv.Must(t, err)
	_, err = e.js.UpdateConsumer(e.ctx, sc.Name, driftedCons)
	testenv.Must(t, err)

	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Configured, Consumer: action.Configured})
	info := consumerInfo(t, e, sc.Name, cc.Durable)
	if info.Config.MaxAckPending != cc.MaxAckPending || info.AckFloor.Stream != 1 || info.NumPending != 2 {
		t.Fatalf("after ensure: max ack pending %d, ack floor %d, pending %d; want %d, 1, 2",
			info.Config.MaxAckPending, info.AckFloor.Stream, info.NumPending, cc.MaxAckPending)
	}
	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Unchanged, Consumer: action.Unchanged})
}

func TestEnsureReportsDriftTheServerCannotUpdate(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Created, Consumer: action.Created})
	testenv.Must(t, e.js.DeleteConsumer(e.ctx, sc.Name, cc.Durable))
	other := cc
	other.ReplayPolicy = jetstream.ReplayOriginalPolicy // cannot be changed in place
	_, err := e.js.CreateConsumer(e.ctx, sc.Name, other)
	testenv.Must(t, err)

	_, err = e.m.EnsureStreamAndConsumer(e.ctx, sc, cc, streams.EnsureOptions{})
	var drift *streams.DriftError
	if !errors.As(err, &drift) || bus.IsTransient(err) {
		t.Fatalf("got %v, want a permanent *DriftError", err)
	}
	if got := consumerInfo(t, e, sc.Name, cc.Durable).Config.ReplayPolicy; got != jetstream.ReplayOriginalPolicy {
		t.Fatalf("the drifted consumer was changed (replay policy %s) without being asked", got)
	}
	e.ensure(t, sc, cc, streams.EnsureOptions{RecreateConsumer: true}, streams.EnsureResult{Stream: action.Unchanged, Consumer: action.Recreated})

	memory := sc
	memory.Name, memory.Subjects, memory.Storage = "TINYCTL_mem", []string{"jobs.mem.>"}, jetstream.MemoryStorage
	_, err = e.js.CreateStream(e.ctx, memory)
	testenv.Must(t, err)
	memory.Storage = jetstream.FileStorage
	if _, err := e.m.EnsureStream(e.ctx, memory); !errors.As(err, &drift) || drift.Diffs[0].Field != "storage" {
		t.Fatalf("storage drift: got %v, want a *DriftError on storage", err)
	}
}

func TestDeleteRemovesTheStreamAndSaysWhenItWasAbsent(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sc, cc := workQueue()
	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Created, Consumer: action.Created})
	for _, want := range []action.Action{action.Deleted, action.Absent} {
		if got, err := e.m.Delete(e.ctx, sc.Name); err != nil || got != want {
			t.Fatalf("delete: got %s (%v), want %s", got, err, want)
		}
	}
	if _, err := e.js.Stream(e.ctx, sc.Name); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("stream still there after Delete: %v", err)
	}
}

func consumerInfo(t *testing.T, e streamEnv, stream, name string) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := e.js.Consumer(e.ctx, stream, name)
	testenv.Must(t, err)
	info, err := c.Info(e.ctx)
	testenv.Must(t, err)
	return info
}

// apiRequests records the JetStream API requests made on nc's server, by
// subject less the $JS.API. prefix and the object names. Each call returns
// everything recorded so far once the server has relayed every request
// made before it.
func apiRequests(t *testing.T, nc *nats.Conn) func() []string {
	t.Helper()
	sub, err := nc.SubscribeSync("$JS.API.>")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	var got []string
	return func() []string {
		// A request of our own, after the ones to count: once it arrives,
		// so have they (one connection's messages keep their order).
		if err := nc.Publish("$JS.API.MARK", nil); err != nil {
			t.Fatal(err)
		}
		for {
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("request log: %v", err)
			}
			verb := strings.TrimPrefix(m.Subject, "$JS.API.")
			if verb == "MARK" {
				return slices.Clone(got)
			}
			for _, kind := range []string{"STREAM.CREATE", "STREAM.INFO", "STREAM.UPDATE", "CONSUMER.CREATE", "CONSUMER.INFO", "CONSUMER.DURABLE.CREATE"} {
				if strings.HasPrefix(verb, kind+".") {
					verb = kind
				}
			}
			got = append(got, verb)
		}
	}
}

// TestANewComponentCostsOneRequestPerObject: a stream just created gets its
// consumer without a lookup, and a stream said to be likely absent is
// created without one; a name that is taken falls back to the lookup.
func TestANewComponentCostsOneRequestPerObject(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	c := natstest.BusConnect(t, s.BusConfig(), nil)
	requests := apiRequests(t, c.NATS())
	e := streamEnv{ctx: testenv.Ctx(t, 20*time.Second), js: c.JetStream(), m: streams.New(c, 4)}
	sc, cc := workQueue()

	e.ensure(t, sc, cc, streams.EnsureOptions{}, streams.EnsureResult{Stream: action.Created, Consumer: action.Created})
	if got, want := requests(), []string{"STREAM.INFO", "STREAM.CREATE", "CONSUMER.CREATE"}; !slices.Equal(got, want) {
		t.Fatalf("a new stream without a hint: requests %v, want %v", got, want)
	}

	other := sc
	other.Name, other.Subjects = "TINYCTL_workers_loader", []string{"jobs.load.>"}
	before := len(requests())
	e.ensure(t, other, cc, streams.EnsureOptions{LikelyAbsent: true}, streams.EnsureResult{Stream: action.Created, Consumer: action.Created})
	if got, want := requests()[before:], []string{"STREAM.CREATE", "CONSUMER.CREATE"}; !slices.Equal(got, want) {
		t.Fatalf("a new stream likely absent: requests %v, want %v", got, want)
	}

	// Taken, with another configuration: looked up and updated in place.
	changed := other
	changed.MaxAge = time.Hour
	before = len(requests())
	e.ensure(t, changed, cc, streams.EnsureOptions{LikelyAbsent: true}, streams.EnsureResult{Stream: action.Configured, Consumer: action.Unchanged})
	if got, want := requests()[before:], []string{"STREAM.CREATE", "STREAM.INFO", "STREAM.UPDATE", "CONSUMER.INFO"}; !slices.Equal(got, want) {
		t.Fatalf("a taken name: requests %v, want %v", got, want)
	}
	if info, err := e.js.Stream(e.ctx, other.Name); err != nil || info.CachedInfo().Config.MaxAge != time.Hour {
		t.Fatalf("stream not updated: %v", err)
	}
}

// A listing outlives the client's default 5-second timeout when whoever
// reads it takes its time (the full recheck renders a spec for each
// stream it has not compared yet).
func TestAWalkIsNotCutShortByASlowReader(t *testing.T) {
	e := newStreamEnv(t)
	for i := range 3 {
		name := fmt.Sprintf("WALK%d", i)
		if _, err := e.js.CreateStream(e.ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"walk." + name}}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	err := e.m.Walk(context.Background(), func(l streams.Listed) {
		seen = append(seen, l.Config.Name)
		time.Sleep(2500 * time.Millisecond) // a slow reader, not a wait for a condition
	})
	if err != nil || len(seen) != 3 {
		t.Fatalf("walk saw %v: %v", seen, err)
	}
}
