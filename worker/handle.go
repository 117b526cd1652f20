package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/codes"
)

// errPanic marks a handler that panicked.
var errPanic = errors.New("handler panicked")

// handle runs h on one job and settles the job: what the handler decided,
// else an ack on success and a delayed nak on failure.
func (w *Worker) handle(ctx context.Context, h Handler, msg jetstream.Msg) {
	w.running.Add(1)
	defer w.running.Add(-1)
	w.m.inFlight.Inc()
	defer w.m.inFlight.Dec()
	job := newJob(msg, w)
	ctx, span := traced(ctx, w.o, job)
	defer span.End()

	stop := w.keepAlive(ctx, job)
	begin := time.Now()
	err := call(ctx, h, job)
	w.m.duration.Observe(time.Since(begin).Seconds())
	stop()
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	outcome := w.settle(ctx, job, err)
	w.m.jobs.WithLabelValues(outcome).Inc()
	log := logger(ctx).Debug()
	if outcome != outcomeAck {
		log = logger(ctx).Warn()
	}
	log.Err(err).Str("job", job.ID()).Str("subject", job.Subject()).Int("attempt", job.Attempt()).
		Str("outcome", outcome).Msg("job handled")
}

// call runs h, turning a panic into an error that carries its stack.
func call(ctx context.Context, h Handler, job *Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v\n%s", errPanic, p, debug.Stack())
		}
	}()
	return h(ctx, job)
}

// settle acks, naks or (a Permanent error) terminates job after its
// handler returned err, unless the handler settled it, and returns the
// outcome. A job whose handler failed
// after the grace period ended is handed back at once.
func (w *Worker) settle(ctx context.Context, job *Job, err error) string {
	if o := job.settled(); o != "" {
		return o
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	outcome, send := outcomeAck, func() error { return job.msg.DoubleAck(sctx) }
	if w.o.fastAcks {
		send = job.msg.Ack
	}
	switch {
	case err != nil && isPermanent(err):
		outcome, send = outcomeTerm, func() error { return job.msg.TermWithReason(err.Error()) }
	case err != nil:
		delay := w.retryDelay(job.Attempt())
		if ctx.Err() != nil {
			delay = 0
		}
		outcome, send = outcomeError, func() error { return job.msg.NakWithDelay(delay) }
		if errors.Is(err, errPanic) {
			outcome = outcomePanic
		}
	}
	if job.settle(outcome, send) != nil {
		if o := job.settled(); o != "" {
			return o // the handler settled it after all, from another goroutine
		}
		return outcomeUnsettled
	}
	return outcome
}

// keepAlive reports the job in progress every half ack wait while its
// handler runs, when the worker runs with KeepAlive; stop ends it.
func (w *Worker) keepAlive(ctx context.Context, job *Job) (stop func()) {
	b := w.bound.Load()
	if !w.o.keepAlive || b == nil || b.keepEvery <= 0 {
		return func() {}
	}
	every := b.keepEvery
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if err := job.InProgress(); err != nil {
					logger(ctx).Warn().Err(err).Str("job", job.ID()).Msg("keep-alive failed")
				}
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}
