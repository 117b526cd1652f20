package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/worker"
)

// pullModes are the ways a worker takes jobs: as many as it has free
// slots (the default), and a standing pull with unconfirmed acks.
var pullModes = map[string][]worker.Option{
	"fetch":    nil,
	"prefetch": {worker.Prefetch(4), worker.UnconfirmedAcks()},
}

func TestJobsAreAckedRetriedOrGivenUp(t *testing.T) {
	t.Parallel()
	for mode, opts := range pullModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			jobsAreAckedRetriedOrGivenUp(t, opts)
		})
	}
}

func jobsAreAckedRetriedOrGivenUp(t *testing.T, opts []worker.Option) {
	q := newQueue(t, 30*time.Second)
	rec := &record{}
	traces := make(chan trace.TraceID, 10)
	sv := q.serve(t, func(ctx context.Context, job *worker.Job) error {
		rec.add(job)
		if job.ID() == "traced" {
			traces <- trace.SpanContextFromContext(ctx).TraceID()
		}
		switch {
		case job.ID() == "fails-once" && job.Attempt() == 1:
			return errors.New("transient")
		case job.ID() == "panics-once" && job.Attempt() == 1:
			panic("boom")
		case job.ID() == "poison":
			return job.Term("cannot be processed")
		case job.ID() == "naks-once" && job.Attempt() == 1:
			return job.Nak(0)
		}
		return nil
	}, append(opts, worker.MaxInFlight(2))...)
	q.publish(t, "traced", nats.Header{"traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
	for _, id := range []string{"fails-once", "panics-once", "poison", "naks-once"} {
		q.publish(t, id, nil)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		return rec.equal(map[string][]int{"traced": {1}, "fails-once": {1, 2}, "panics-once": {1, 2}, "poison": {1}, "naks-once": {1, 2}})
	})
	testenv.Eventually(t, 5*time.Second, func() error {
		msgs, ci := q.state(t)
		if msgs != 0 || ci.NumPending != 0 || ci.NumAckPending != 0 {
			return fmt.Errorf("stream holds %d jobs; consumer: %d pending, %d unacked", msgs, ci.NumPending, ci.NumAckPending)
		}
		return nil
	})
	if got := <-traces; got.String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("handler saw trace %s, want the job's traceparent", got)
	}
	for outcome, want := range map[string]float64{"ack": 4, "error": 1, "panic": 1, "term": 1, "nak": 1, "unsettled": 0} {
		if got := sv.count(t, outcome); got != want {
			t.Errorf("tinyctl_worker_jobs_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
}

func TestDrainLetsRunningJobsFinishAndPullsNoMore(t *testing.T) {
	t.Parallel()
	q := newQueue(t, 30*time.Second)
	finish := make(chan struct{})
	var started atomic.Int32
	rec := &record{}
	sv := q.serve(t, func(ctx context.Context, job *worker.Job) error {
		started.Add(1)
		<-finish
		rec.add(job)
		return nil
	}, worker.MaxInFlight(3))
	for i := range 5 {
		q.publish(t, fmt.Sprint(i), nil)
	}
	// Three handlers run (a job delivered but not yet started when the
	// drain begins is handed back instead, by design).
	testenv.Eventually(t, 5*time.Second, func() error {
		if n := started.Load(); n != 3 {
			return fmt.Errorf("%d handlers started, want 3 (MaxInFlight)", n)
		}
		return nil
	})
	testenv.Eventually(t, 5*time.Second, func() error {
		if _, ci := q.state(t); ci.NumAckPending != 3 || ci.NumPending != 2 {
			return fmt.Errorf("%d jobs delivered and unacked, %d waiting; want 3 (MaxInFlight) and 2", ci.NumAckPending, ci.NumPending)
		}
		return nil
	})
	sv.stop()
	close(finish)
	if err := sv.wait(t, 10*time.Second); err != nil {
		t.Fatalf("Serve after a clean drain: %v", err)
	}
	msgs, ci := q.state(t)
	if msgs != 2 || ci.NumAckPending != 0 || ci.NumRedelivered != 0 || ci.AckFloor.Stream != 3 {
		t.Errorf("after the drain: stream holds %d jobs, %d unacked, %d redelivered, ack floor %d; want 2, 0, 0, 3",
			msgs, ci.NumAckPending, ci.NumRedelivered, ci.AckFloor.Stream)
	}
	if got := sv.count(t, "ack"); got != 3 {
		t.Errorf("acked %v jobs, want the 3 that were running", got)
	}
}

func TestGracePeriodCancelsHandlersAndHandsTheirJobsBack(t *testing.T) {
	t.Parallel()
	q := newQueue(t, 30*time.Second)
	started := make(chan struct{}, 1)
	sv := q.serve(t, func(ctx context.Context, job *worker.Job) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}, worker.Grace(100*time.Millisecond), worker.RetryDelay(func(int) time.Duration { return time.Hour }))
	q.publish(t, "slow", nil)
	<-started
	sv.stop()
	if err := sv.wait(t, 5*time.Second); err != nil {
		t.Fatalf("Serve with a handler that honours its context: %v", err)
	}
	// Handed back with no delay despite the hour RetryDelay gives: the
	// next pull gets it, long before the ack wait.
	batch, err := q.cons.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
	testenv.Must(t, err)
	msg, ok := <-batch.Messages()
	if !ok {
		t.Fatalf("the job was not handed back at once: no redelivery within 3s (%v)", batch.Error())
	}
	meta, err := msg.Metadata()
	testenv.Must(t, err)
	if meta.NumDelivered != 2 {
		t.Errorf("redelivered job has attempt %d, want 2", meta.NumDelivered)
	}
}

func TestServeReportsHandlersThatOutliveTheGracePeriod(t *testing.T) {
	t.Parallel()
	q := newQueue(t, 30*time.Second)
	started, hung := make(chan struct{}, 1), make(chan struct{})
	t.Cleanup(func() { close(hung) })
	sv := q.serve(t, func(context.Context, *worker.Job) error {
		started <- struct{}{}
		<-hung // ignores its context
		return nil
	}, worker.Grace(100*time.Millisecond))
	q.publish(t, "stuck", nil)
	<-started
	sv.stop()
	err := sv.wait(t, 5*time.Second)
	if err == nil || !errors.Is(err, worker.ErrGraceExpired) {
		t.Fatalf("Serve returned %v, want ErrGraceExpired", err)
	}
}

func TestKeepAliveHoldsALongJob(t *testing.T) {
	t.Parallel()
	q := newQueue(t, time.Second)
	rec := &record{}
	q.serve(t, func(ctx context.Context, job *worker.Job) error {
		rec.add(job)
		select { // work for 2.5 ack waits
		case <-time.After(2500 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}, worker.KeepAlive(), worker.MaxInFlight(2))
	q.publish(t, "long", nil)
	testenv.Eventually(t, 10*time.Second, func() error {
		if msgs, _ := q.state(t); msgs != 0 {
			return fmt.Errorf("stream still holds %d jobs", msgs)
		}
		return nil
	})
	if _, ci := q.state(t); ci.NumRedelivered != 0 {
		t.Errorf("%d redeliveries of a job kept alive", ci.NumRedelivered)
	}
	testenv.Must(t, rec.equal(map[string][]int{"long": {1}}))
}

func TestWorkerWaitsForItsConsumer(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	rec := &record{}
	q := &queue{s: s}
	q.serve(t, func(_ context.Context, job *worker.Job) error {
		rec.add(job)
		return nil
	})
	ready := newQueueOn(t, s, 30*time.Second) // created after the worker started
	ready.publish(t, "late", nil)
	testenv.Eventually(t, 15*time.Second, func() error { return rec.equal(map[string][]int{"late": {1}}) })
}

// TestTheDeploymentsDrainGraceBoundsTheDrain gives the worker a grace
// period the way a Deployment with terminationGracePeriodSeconds does
// (Config.Grace, read from TINYCTL_DRAIN_GRACE) and no Grace option: a
// handler that hangs is given up after it, not after DefaultGrace.
func TestTheDeploymentsDrainGraceBoundsTheDrain(t *testing.T) {
	t.Parallel()
	q := newQueue(t, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := worker.New(ctx, worker.Config{URL: q.s.URL(), Stream: testStream, Consumer: testConsumer,
		Name: t.Name(), Grace: 200 * time.Millisecond}, worker.Registry(prometheus.NewRegistry()))
	testenv.Must(t, err)
	defer w.Close()
	started, hung := make(chan struct{}, 1), make(chan struct{})
	defer close(hung)
	done := make(chan error, 1)
	go func() {
		done <- w.Serve(ctx, func(context.Context, *worker.Job) error {
			started <- struct{}{}
			<-hung
			return nil
		})
	}()
	q.publish(t, "stuck", nil)
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, worker.ErrGraceExpired) || !strings.Contains(err.Error(), "200ms") {
			t.Fatalf("Serve returned %v, want ErrGraceExpired after the Deployment's 200ms", err)
		}
	case <-time.After(worker.DefaultGrace - 5*time.Second):
		t.Fatal("the drain waited for DefaultGrace, not the Deployment's grace")
	}
}
