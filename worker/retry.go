package worker

import (
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// bound is what the worker keeps of the consumer it is bound to.
type bound struct {
	// keepEvery is the KeepAlive interval: half the shortest ack wait.
	keepEvery time.Duration
	// backoff is the consumer's redelivery schedule, maxDeliver how many
	// deliveries a job gets (0: no limit).
	backoff    []time.Duration
	maxDeliver int
}

func boundTo(c jetstream.ConsumerConfig) *bound {
	return &bound{keepEvery: shortestAckWait(c) / 2, backoff: c.BackOff, maxDeliver: c.MaxDeliver}
}

// retryDelay is how long JetStream is to wait before redelivering a job
// whose handler failed on attempt: as the RetryDelay option says, else the
// consumer's backoff step for that attempt (spec.jobs.consumer.backoff:
// JetStream applies it to ack timeouts only, never to naks, so the worker
// naks with it), else DefaultRetryDelay.
func (w *Worker) retryDelay(attempt int) time.Duration {
	if f := w.o.retryDelay; f != nil {
		return f(attempt)
	}
	if b := w.bound.Load(); b != nil && len(b.backoff) > 0 {
		return b.backoff[min(max(attempt, 1), len(b.backoff))-1]
	}
	return DefaultRetryDelay(attempt)
}

// Permanent marks err as one no retry can fix (a job that does not parse,
// say): the worker terminates the job, with err's text as the reason,
// instead of handing it back. A nil err stays nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
