package worker_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/worker"
)

// BenchmarkThroughput handles b.N tiny jobs (a handler that does nothing)
// with the worker as shipped and with its throughput options, beside two floors that settle the same jobs
// with nats.go's jetstream API alone: a standing Messages pull (its default
// 500-message buffer) and the same with each ack confirmed (DoubleAck, as
// the worker does). Each run ends when the work-queue stream is empty, so
// every job was acked; jobs/s is the figure to compare.
//
//	go test ./worker -run '^$' -bench Throughput -benchtime 20000x -count 3
func BenchmarkThroughput(b *testing.B) {
	s := natstest.Start(b)
	for _, mode := range []struct {
		name string
		opts []worker.Option
	}{
		{"inflight=1", []worker.Option{worker.MaxInFlight(1)}},
		{"inflight=1/unconfirmed", []worker.Option{worker.MaxInFlight(1), worker.UnconfirmedAcks()}},
		{"inflight=1/prefetch=64", []worker.Option{worker.MaxInFlight(1), worker.Prefetch(64)}},
		{"inflight=1/prefetch=64/unconfirmed", []worker.Option{worker.MaxInFlight(1), worker.Prefetch(64), worker.UnconfirmedAcks()}},
		{"inflight=16", []worker.Option{worker.MaxInFlight(16)}},
		{"inflight=16/unconfirmed", []worker.Option{worker.MaxInFlight(16), worker.UnconfirmedAcks()}},
		{"inflight=16/prefetch=64/unconfirmed", []worker.Option{worker.MaxInFlight(16), worker.Prefetch(64), worker.UnconfirmedAcks()}},
	} {
		b.Run("worker/"+mode.name, func(b *testing.B) {
			q := benchQueue(b, s)
			b.ResetTimer()
			handled := q.runWorker(b, mode.opts...)
			q.emptied(b)
			b.StopTimer()
			report(b, handled.Load())
		})
	}
	for _, confirm := range []bool{false, true} {
		b.Run(fmt.Sprintf("floor/messages/doubleack=%t", confirm), func(b *testing.B) {
			q := benchQueue(b, s)
			b.ResetTimer()
			acked := q.drainRaw(b, confirm)
			b.StopTimer()
			report(b, acked)
		})
	}
}

func report(b *testing.B, n int64) {
	if n < int64(b.N) {
		b.Fatalf("settled %d jobs, want %d", n, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
}

// benchQueue is a fresh stream and consumer holding b.N jobs.
func benchQueue(b *testing.B, s *natstest.Server) *queue {
	b.Helper()
	ctx := testenv.Ctx(b, time.Minute)
	js, err := jetstream.New(s.Connect(b))
	testenv.Must(b, err)
	_ = js.DeleteStream(ctx, testStream) // the previous run's, if any
	q := newQueueOf(b, s, jetstream.ConsumerConfig{AckWait: 30 * time.Second, MaxDeliver: 5, MaxAckPending: 1000})
	for i := range b.N {
		if _, err := q.js.PublishAsync("t.job", []byte(strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-q.js.PublishAsyncComplete():
	case <-ctx.Done():
		b.Fatal("publishing the jobs did not complete")
	}
	return q
}

// runWorker serves the queue with a worker until the stream is empty and
// returns how many jobs its handler saw.
func (q *queue) runWorker(b *testing.B, opts ...worker.Option) *atomic.Int64 {
	b.Helper()
	var handled atomic.Int64
	ctx, cancel := context.WithCancel(zerolog.Nop().WithContext(context.Background()))
	w, err := worker.New(ctx, worker.Config{URL: q.nc.ConnectedUrl(), Stream: testStream, Consumer: testConsumer, Name: b.Name()},
		append([]worker.Option{worker.Registry(prometheus.NewRegistry())}, opts...)...)
	testenv.Must(b, err)
	done := make(chan error, 1)
	go func() {
		done <- w.Serve(ctx, func(context.Context, *worker.Job) error { handled.Add(1); return nil })
	}()
	b.Cleanup(func() {
		cancel()
		<-done
		w.Close()
	})
	return &handled
}

// emptied waits until the stream holds no job: every one was acked.
func (q *queue) emptied(b *testing.B) {
	b.Helper()
	testenv.EventuallyEvery(b, 5*time.Minute, time.Millisecond, func() error {
		si, err := q.st.Info(context.Background())
		if err != nil {
			return err
		}
		if si.State.Msgs != 0 {
			return fmt.Errorf("%d jobs left", si.State.Msgs)
		}
		return nil
	})
}

// drainRaw acks every job through a standing Messages pull, confirming
// each ack when confirm is set, and returns how many it acked.
func (q *queue) drainRaw(b *testing.B, confirm bool) int64 {
	b.Helper()
	it, err := q.cons.Messages()
	testenv.Must(b, err)
	defer it.Stop()
	ctx := testenv.Ctx(b, 5*time.Minute)
	var acked int64
	for acked < int64(b.N) {
		msg, err := it.Next()
		testenv.Must(b, err)
		if confirm {
			err = msg.DoubleAck(ctx)
		} else {
			err = msg.Ack()
		}
		testenv.Must(b, err)
		acked++
	}
	if !confirm {
		testenv.Must(b, q.nc.Flush())
		q.emptied(b)
	}
	return acked
}
