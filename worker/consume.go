package worker

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A standing pull's request lasts consumeExpiry, and the server sends an
// idle heartbeat every consumeHeartbeat while it has no job to send: a
// pull lost with its server or connection is noticed in two heartbeats.
const (
	consumeExpiry    = 10 * time.Second
	consumeHeartbeat = 2 * time.Second
)

// consume is pull with Prefetch: one standing pull (nats.go's Messages)
// keeps up to w.o.prefetch jobs buffered in this process, refilled as
// they are taken, and each job starts as soon as a handler slot is free.
// When ctx ends the pull is drained and the buffered jobs are handed back
// (handBack).
func (w *Worker) consume(ctx context.Context, start func(msg jetstream.Msg, release func())) {
	slots := make(chan struct{}, w.o.maxInFlight)
	failures := 0
	for ctx.Err() == nil {
		err := w.consumeOnce(ctx, slots, start, func() { failures = 0 })
		if ctx.Err() != nil {
			return
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

// consumeOnce binds the consumer and runs one standing pull until ctx
// ends (nil) or the pull fails (its error: the consumer deleted, a
// heartbeat missed). ok is called for each job that arrives.
func (w *Worker) consumeOnce(ctx context.Context, slots chan struct{}, start func(jetstream.Msg, func()), ok func()) error {
	cons, err := w.bind(ctx)
	if err != nil {
		return err
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(w.o.prefetch), jetstream.PullExpiry(consumeExpiry),
		jetstream.PullHeartbeat(consumeHeartbeat), jetstream.WithMessagesErrOnMissingHeartbeat(true))
	if err != nil {
		return err
	}
	defer it.Stop()
	for {
		if acquire1(ctx, slots) {
			msg, err := it.Next(jetstream.NextContext(ctx))
			if err == nil {
				ok()
				start(msg, func() { release(slots, 1) })
				continue
			}
			release(slots, 1)
			if ctx.Err() == nil {
				return err
			}
		}
		w.handBackBuffered(it)
		return nil
	}
}

// handBackBuffered drains the pull and hands back each job it had
// buffered. A job the server sent after the drain unsubscribed waits out
// its ack wait.
func (w *Worker) handBackBuffered(it jetstream.MessagesContext) {
	it.Drain()
	for {
		msg, err := it.Next(jetstream.NextMaxWait(pollWait))
		if err != nil {
			if !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				it.Stop()
			}
			return
		}
		w.handBack(msg)
	}
}

// acquire1 takes one handler slot, blocking until one is free; it returns
// false when ctx ended first.
func acquire1(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}
