package worker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/worker"
)

// settlements records what the worker told the server about its jobs:
// the payloads of its acks, naks and terms ($JS.ACK.<stream>.<consumer>.…),
// which a client of the same account sees.
type settlements struct {
	mu  sync.Mutex
	got []string
}

func watchSettlements(t *testing.T, q *queue) *settlements {
	t.Helper()
	s := &settlements{}
	sub, err := q.nc.Subscribe(fmt.Sprintf("$JS.ACK.%s.%s.>", testStream, testConsumer), func(m *nats.Msg) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.got = append(s.got, string(m.Data))
	})
	testenv.Must(t, err)
	testenv.Must(t, q.nc.Flush())
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return s
}

func (s *settlements) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// TestAFailedJobWaitsOutTheConsumersBackoff: JetStream applies a
// consumer's backoff to ack timeouts only, so the worker naks a failed job
// with the backoff step of its attempt (the last step after that); the
// job knows its last attempt, after which it is not delivered again.
func TestAFailedJobWaitsOutTheConsumersBackoff(t *testing.T) {
	t.Parallel()
	backoff := []time.Duration{150 * time.Millisecond, 400 * time.Millisecond}
	q := newQueueOf(t, natstest.Start(t), jetstream.ConsumerConfig{BackOff: backoff, MaxDeliver: 3})
	acks := watchSettlements(t, q)
	var mu sync.Mutex
	var last []bool
	rec := &record{}
	q.serve(t, func(_ context.Context, job *worker.Job) error {
		rec.add(job)
		mu.Lock()
		last = append(last, job.LastAttempt())
		mu.Unlock()
		return errors.New("the database is down")
	}, worker.RetryDelay(nil)) // the harness's 10ms gone: the default
	q.publish(t, "flaky", nil)

	want := []string{
		fmt.Sprintf(`-NAK {"delay": %d}`, backoff[0]), fmt.Sprintf(`-NAK {"delay": %d}`, backoff[1]),
		fmt.Sprintf(`-NAK {"delay": %d}`, backoff[1]),
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if got := acks.all(); !slices.Equal(got, want) {
			return fmt.Errorf("the worker sent %q, want %q", got, want)
		}
		return rec.equal(map[string][]int{"flaky": {1, 2, 3}})
	})
	mu.Lock()
	if !slices.Equal(last, []bool{false, false, true}) {
		t.Errorf("LastAttempt on attempts 1, 2, 3: %v, want only the third", last)
	}
	mu.Unlock()
	// Its deliveries used up, the job stays in the stream for no one.
	testenv.Eventually(t, 5*time.Second, func() error {
		msgs, ci := q.state(t)
		if msgs != 1 || ci.NumAckPending != 0 || ci.NumPending != 0 {
			return fmt.Errorf("stream holds %d jobs; consumer: %d pending, %d unacked; want 1, 0, 0", msgs, ci.NumPending, ci.NumAckPending)
		}
		return nil
	})
}

// TestAPermanentErrorTerminatesTheJob: worker.Permanent gives the job up
// with the error's text as the reason; it is not redelivered.
func TestAPermanentErrorTerminatesTheJob(t *testing.T) {
	t.Parallel()
	q := newQueue(t, 30*time.Second)
	acks := watchSettlements(t, q)
	rec := &record{}
	bad := errors.New(`not JSON: invalid character 'x'`)
	sv := q.serve(t, func(_ context.Context, job *worker.Job) error {
		rec.add(job)
		return worker.Permanent(fmt.Errorf("job %s: %w", job.ID(), bad))
	})
	q.publish(t, "garbled", nil)
	testenv.Eventually(t, 10*time.Second, func() error {
		if msgs, _ := q.state(t); msgs != 0 {
			return fmt.Errorf("stream still holds %d jobs", msgs)
		}
		return nil
	})
	if got, want := acks.all(), []string{"+TERM job garbled: not JSON: invalid character 'x'"}; !slices.Equal(got, want) {
		t.Errorf("the worker sent %q, want %q", got, want)
	}
	testenv.Must(t, rec.equal(map[string][]int{"garbled": {1}}))
	if got := sv.count(t, "term"); got != 1 {
		t.Errorf("tinyctl_worker_jobs_total{outcome=term} = %v, want 1", got)
	}
	if !errors.Is(worker.Permanent(bad), bad) || worker.Permanent(nil) != nil {
		t.Error("Permanent does not wrap its error, or makes one of nil")
	}
}

// TestAJobPublishesItsResultInItsTrace: Job.Publish stores a result in the
// stream of its subject, with the job's trace context in its headers.
func TestAJobPublishesItsResultInItsTrace(t *testing.T) {
	t.Parallel()
	q := newQueue(t, 30*time.Second)
	ctx := testenv.Ctx(t, 10*time.Second)
	results, err := q.js.CreateStream(ctx, jetstream.StreamConfig{Name: "results", Subjects: []string{"r.>"}})
	testenv.Must(t, err)
	q.serve(t, func(ctx context.Context, job *worker.Job) error {
		return job.Publish(ctx, "r."+job.ID(), []byte("done: "+string(job.Data())))
	})
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	q.publish(t, "thumb", nats.Header{"traceparent": {"00-" + trace + "-00f067aa0ba902b7-01"}})
	var got *jetstream.RawStreamMsg
	testenv.Eventually(t, 10*time.Second, func() error {
		got, err = results.GetLastMsgForSubject(ctx, "r.thumb")
		return err
	})
	if string(got.Data) != "done: thumb" {
		t.Errorf("result %q, want %q", got.Data, "done: thumb")
	}
	if tp := got.Header.Get("traceparent"); !strings.HasPrefix(tp, "00-"+trace+"-") {
		t.Errorf("result's traceparent %q, want one of trace %s", tp, trace)
	}
	// Publishing where no stream listens is an error naming the subject.
	q2 := newQueue(t, 30*time.Second)
	errs := make(chan error, 1)
	q2.serve(t, func(ctx context.Context, job *worker.Job) error {
		err := job.Publish(ctx, "nowhere.x", nil)
		errs <- err
		return nil
	})
	q2.publish(t, "lost", nil)
	select {
	case err := <-errs:
		if err == nil || !strings.Contains(err.Error(), "publish to nowhere.x") {
			t.Errorf("publish to no stream: %v, want an error naming the subject", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not run within 10s")
	}
}
