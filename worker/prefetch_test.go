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
// handler slot, the consumer shows the running job and the buffered ones
// delivered; a drain finishes the running job and hands the buffered
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
	// nats.go refills the buffer once half of it is taken: 2 or 3 jobs
	// wait in this process beside the running one.
	var buffered int
	testenv.Eventually(t, 5*time.Second, func() error {
		_, ci := q.state(t)
		buffered = ci.NumAckPending - 1
		if started.Load() != 1 || buffered < 2 || buffered > 3 || ci.NumPending != uint64(5-buffered) {
			return fmt.Errorf("%d handlers started, %d jobs delivered and unacked, %d waiting; want 1 running, 2 or 3 more buffered (Prefetch(3)), the rest waiting",
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
	if got := sv.count(t, "returned"); got != float64(buffered) {
		t.Errorf("handed back %v jobs, want the %d buffered", got, buffered)
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

// TestPrefetchFollowsARecreatedConsumer: the standing pull ends when its
// consumer is deleted, and the worker binds the new one and goes on.
func TestPrefetchFollowsARecreatedConsumer(t *testing.T) {
	t.Parallel()
	q := newQueue(t, 30*time.Second)
	rec := &record{}
	q.serve(t, func(_ context.Context, job *worker.Job) error { rec.add(job); return nil }, worker.Prefetch(2))
	q.publish(t, "before", nil)
	testenv.Eventually(t, 5*time.Second, func() error { return rec.equal(map[string][]int{"before": {1}}) })
	ctx := testenv.Ctx(t, 10*time.Second)
	testenv.Must(t, q.st.DeleteConsumer(ctx, testConsumer))
	_, err := q.st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: testConsumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second})
	testenv.Must(t, err)
	q.publish(t, "after", nil)
	testenv.Eventually(t, 15*time.Second, func() error { return rec.equal(map[string][]int{"before": {1}, "after": {1}}) })
}
