package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Backoff between failed pulls.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 5 * time.Second
)

// pull fetches jobs until ctx ends and passes each to start with the
// function that frees its slot. It asks only for as many jobs as there
// are free slots, so no job waits in this process while handlers are
// busy. A job that arrives after ctx ended is handed back (handBack).
// With Prefetch a buffer stands between the fetches and the handlers
// (prefetch).
func (w *Worker) pull(ctx context.Context, start func(msg jetstream.Msg, release func())) {
	if w.o.prefetch > 0 {
		w.prefetch(ctx, start)
		return
	}
	w.fetchInto(ctx, w.o.maxInFlight, start)
}

// fetchInto fetches jobs for capacity slots until ctx ends, binding the
// consumer again when it was deleted.
func (w *Worker) fetchInto(ctx context.Context, capacity int, start func(msg jetstream.Msg, release func())) {
	slots := make(chan struct{}, capacity)
	var cons jetstream.Consumer
	failures := 0
	for {
		var err error
		if cons == nil {
			cons, err = w.bind(ctx)
		}
		if err == nil {
			n := acquire(ctx, slots)
			if n == 0 {
				return
			}
			err = w.fetch(ctx, cons, n, slots, start)
		}
		if err == nil {
			failures = 0
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			cons = nil
		}
		w.m.pullErrs.Inc()
		failures++
		logger(ctx).Warn().Err(err).Str("stream", w.cfg.Stream).Str("consumer", w.cfg.Consumer).
			Int("failures", failures).Msg("pulling jobs failed; retrying")
		if !pause(ctx, backoff(failures)) {
			return
		}
	}
}

// fetch makes one pull request for n jobs, n slots being held, and starts
// a handler for each job; the slots of jobs that did not come are freed.
// It returns the request's error. A draining worker waits its request out
// (at most pollWait) and hands back what still comes (handBack).
func (w *Worker) fetch(ctx context.Context, cons jetstream.Consumer, n int, slots chan struct{},
	start func(jetstream.Msg, func())) error {
	batch, err := cons.Fetch(n, jetstream.FetchMaxWait(pollWait))
	if err != nil {
		release(slots, n)
		return err
	}
	got := 0
	for msg := range batch.Messages() {
		got++
		if ctx.Err() != nil {
			w.handBack(msg)
			release(slots, 1)
			continue
		}
		start(msg, func() { release(slots, 1) })
	}
	release(slots, n-got)
	return batch.Error()
}

// handBack naks a job pulled after the worker was told to stop, so that
// JetStream redelivers it in pollWait instead of after the ack wait. Not at
// once: the other pods of a component scaling in have pull requests
// waiting too, and a job handed back at once went to one of them, was
// handed back again, and so on, each time a delivery, until it had used
// its maxDeliver and stayed in the stream for good (the KEDA real-node
// test caught one). In pollWait every draining pod's request has ended.
// (Ending the request with the drain instead, FetchContext, drops a job
// already on its way, which then waits out the ack wait.)
func (w *Worker) handBack(msg jetstream.Msg) {
	if err := msg.NakWithDelay(pollWait); err != nil {
		w.m.jobs.WithLabelValues(outcomeUnsettled).Inc()
		return
	}
	w.m.jobs.WithLabelValues(outcomeReturned).Inc()
}

// bind looks the component's consumer up and keeps what the worker needs
// of its settings (boundTo).
func (w *Worker) bind(ctx context.Context) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	cons, err := w.js.Consumer(ctx, w.cfg.Stream, w.cfg.Consumer)
	if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("consumer %s of stream %s (tinyctl serve creates both for a published component placed on this cluster): %w",
			w.cfg.Consumer, w.cfg.Stream, err)
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s of stream %s: %w", w.cfg.Consumer, w.cfg.Stream, err)
	}
	w.bound.Store(boundTo(cons.CachedInfo().Config))
	return cons, nil
}

// shortestAckWait is the shortest time JetStream waits for an ack: the
// ack wait, or a shorter step of the backoff list.
func shortestAckWait(c jetstream.ConsumerConfig) time.Duration {
	d := c.AckWait
	for _, b := range c.BackOff {
		if d == 0 || b < d {
			d = b
		}
	}
	if d == 0 {
		d = 30 * time.Second // the server's default
	}
	return d
}

// acquire blocks until a slot is free and takes every free slot; it
// returns how many it took, 0 when ctx ended first.
func acquire(ctx context.Context, slots chan struct{}) int {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < cap(slots) {
		select {
		case slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
	return n
}

func release(slots chan struct{}, n int) {
	for range n {
		<-slots
	}
}

// backoff doubles from retryFirst with each failure, up to retryMax.
func backoff(failures int) time.Duration {
	return min(retryFirst<<min(failures-1, 10), retryMax)
}

// pause waits d; it returns false when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
