package worker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/worker"
)

const (
	testStream   = "tinyctl_t_jobs"
	testConsumer = "tinyctl_t_jobs_worker"
)

// queue is a work-queue stream with its durable consumer on an embedded
// server, and a client that publishes and inspects it.
type queue struct {
	s    *natstest.Server
	js   jetstream.JetStream
	nc   *nats.Conn
	cons jetstream.Consumer
	st   jetstream.Stream
}

func newQueue(t *testing.T, ackWait time.Duration) *queue {
	t.Helper()
	return newQueueOn(t, natstest.Start(t), ackWait)
}

// newQueueOn makes the stream and consumer on s.
func newQueueOn(t *testing.T, s *natstest.Server, ackWait time.Duration) *queue {
	t.Helper()
	return newQueueOf(t, s, jetstream.ConsumerConfig{AckWait: ackWait, MaxDeliver: 5})
}

// newQueueOf makes the stream and a consumer of config cc (its name and
// ack policy set here) on s.
func newQueueOf(t testing.TB, s *natstest.Server, cc jetstream.ConsumerConfig) *queue {
	t.Helper()
	nc := s.Connect(t)
	js, err := jetstream.New(nc)
	testenv.Must(t, err)
	ctx := testenv.Ctx(t, 10*time.Second)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: testStream, Subjects: []string{"t.>"}, Retention: jetstream.WorkQueuePolicy})
	testenv.Must(t, err)
	cc.Durable, cc.AckPolicy = testConsumer, jetstream.AckExplicitPolicy
	cons, err := st.CreateConsumer(ctx, cc)
	testenv.Must(t, err)
	return &queue{s: s, js: js, nc: nc, cons: cons, st: st}
}

// publish stores one job with the given id (Nats-Msg-Id) and headers.
func (q *queue) publish(t *testing.T, id string, hdr nats.Header) {
	t.Helper()
	msg := &nats.Msg{Subject: "t.job." + id, Data: []byte(id), Header: nats.Header{}}
	for k, v := range hdr {
		msg.Header[k] = v
	}
	_, err := q.js.PublishMsg(testenv.Ctx(t, 5*time.Second), msg, jetstream.WithMsgID(id))
	testenv.Must(t, err)
}

// state is the stream's message count and the consumer's counters.
func (q *queue) state(t *testing.T) (msgs uint64, ci *jetstream.ConsumerInfo) {
	t.Helper()
	ctx := testenv.Ctx(t, 5*time.Second)
	si, err := q.st.Info(ctx)
	testenv.Must(t, err)
	ci, err = q.cons.Info(ctx)
	testenv.Must(t, err)
	return si.State.Msgs, ci
}

// serving runs a Worker with h until the test ends or stop is called;
// wait returns Serve's error.
type serving struct {
	stop context.CancelFunc
	done chan error
	reg  *prometheus.Registry
}

func (q *queue) serve(t *testing.T, h worker.Handler, opts ...worker.Option) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(zerolog.New(zerolog.NewTestWriter(t)).WithContext(context.Background()))
	reg := prometheus.NewRegistry()
	w, err := worker.New(ctx, worker.Config{URL: q.s.URL(), Stream: testStream, Consumer: testConsumer, Name: t.Name()},
		append([]worker.Option{worker.Registry(reg), worker.RetryDelay(func(int) time.Duration { return 10 * time.Millisecond })}, opts...)...)
	testenv.Must(t, err)
	sv := &serving{stop: cancel, done: make(chan error, 1), reg: reg}
	go func() { sv.done <- w.Serve(ctx, h) }()
	t.Cleanup(func() {
		cancel()
		<-sv.done
		w.Close()
	})
	return sv
}

// wait returns Serve's error once it returned, failing the test after d.
func (sv *serving) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-sv.done:
		sv.done <- err // for the cleanup
		return err
	case <-time.After(d):
		t.Fatalf("Serve did not return within %s", d)
		return nil
	}
}

// count is the value of tinyctl_worker_jobs_total for outcome.
func (sv *serving) count(t *testing.T, outcome string) float64 {
	t.Helper()
	mfs, err := sv.reg.Gather()
	testenv.Must(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "tinyctl_worker_jobs_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// record keeps what handlers saw: per job id, its delivery attempts.
type record struct {
	mu       sync.Mutex
	attempts map[string][]int
}

func (r *record) add(job *worker.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.attempts == nil {
		r.attempts = map[string][]int{}
	}
	r.attempts[job.ID()] = append(r.attempts[job.ID()], job.Attempt())
}

func (r *record) equal(want map[string][]int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, w := range want {
		if !slices.Equal(r.attempts[id], w) {
			return fmt.Errorf("job %s: attempts %v, want %v (all: %v)", id, r.attempts[id], w, r.attempts)
		}
	}
	if len(r.attempts) != len(want) {
		return fmt.Errorf("handled %v, want %v", r.attempts, want)
	}
	return nil
}
