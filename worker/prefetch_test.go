package worker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/worker"
)

// TestPrefetchBuffersJobsAndHandsThemBackOnDrain: with Prefetch(3) and one
// handler slot, the consumer shows the running job and the three
// buffered ones delivered; a drain finishes the running job and hands the buffered
// ones back, so another worker takes all five left well before their 30 s
// ack wait.
func TestPrefetchBuffersJobsAndHandsThemBackOnDrain(t *testing.T) {
	t.Parallel()
	q := newQueue(t, 30*time.Second)
	finish := make(chan struct{})
	var started atomic.Int32
	sv := q.serve(t, func(ctx context.Context, job *worker.Job) error {
		started.Add(1)
		<-finish
		return nil
	}, worker.Prefetch(3))
	for i := range 6 {
		q.publish(t, fmt.Sprint(i), nil)
	}
	testenv.Eventually(t, 5*time.Second, func() error {
		if _, ci := q.state(t); started.Load() != 1 || ci.NumAckPending != 4 || ci.NumPending != 2 {
			return fmt.Errorf("%d handlers started, %d jobs delivered and unacked, %d waiting; want 1, 4 (one running, three buffered) and 2",
				started.Load(), ci.NumAckPending, ci.NumPending)
		}
		return nil
	})
	sv.stop()
	close(finish)
	if err := sv.wait(t, 10*time.Second); err != nil {
		t.Fatalf("Serve after a clean drain: %v", err)
	}
	if got := sv.count(t, "ack"); got != 1 {
		t.Errorf("acked %v jobs, want the one that was running", got)
	}
	if got := sv.count(t, "returned"); got != 3 {
		t.Errorf("handed back %v jobs, want the 3 buffered", got)
	}
	var handled atomic.Int32
	q.serve(t, func(context.Context, *worker.Job) error { handled.Add(1); return nil })
	testenv.Eventually(t, 10*time.Second, func() error {
		if msgs, _ := q.state(t); msgs != 0 || handled.Load() != 5 {
			return fmt.Errorf("the stream still holds %d jobs, %d handled by the next worker; want 0 and 5", msgs, handled.Load())
		}
		return nil
	})
}

// TestPrefetchFollowsARecreatedConsumer: the fetches end when their
// consumer is deleted, and the worker binds the new one and takes its
// settings: its maxDeliver of 1 makes the next job's first attempt the
// last.
func TestPrefetchFollowsARecreatedConsumer(t *testing.T) {
	t.Parallel()
	q := newQueue(t, 30*time.Second)
	last := make(chan bool, 2)
	q.serve(t, func(_ context.Context, job *worker.Job) error { last <- job.LastAttempt(); return nil }, worker.Prefetch(2))
	q.publish(t, "before", nil)
	if <-last {
		t.Fatalf("the first job's first attempt is its last under a consumer with maxDeliver 5")
	}
	ctx := testenv.Ctx(t, 10*time.Second)
	testenv.Must(t, q.st.DeleteConsumer(ctx, testConsumer))
	_, err := q.st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: testConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second, MaxDeliver: 1})
	testenv.Must(t, err)
	q.publish(t, "after", nil)
	select {
	case isLast := <-last:
		if !isLast {
			t.Errorf("a job of the recreated consumer (maxDeliver 1) is not on its last attempt: the worker kept the old consumer's settings")
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("no job handled within 15s of the consumer being recreated")
	}
}
