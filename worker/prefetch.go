package worker

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// prefetch is pull with Prefetch: short fetches (fetchInto) fill a buffer
// of w.o.prefetch jobs while the handlers run, and each job starts as soon
// as one of MaxInFlight handler slots is free, its room in the buffer
// then fetched again. So a pull round trip overlaps the handlers' work,
// and at most Prefetch jobs wait in this process. When ctx ends the
// fetches stop (within pollWait) and the buffered jobs are handed back
// (handBack).
//
// Not nats.go's Messages: its standing pull shares one channel, of its
// buffer's size, between jobs and the server's heartbeats and status
// messages, and drops what does not fit (a slow consumer). A worker that
// takes a job only when a slot is free leaves that channel unread while
// its handlers are busy, so after a few heartbeats the next job would be
// dropped, to wait out its ack wait and lose a delivery.
func (w *Worker) prefetch(ctx context.Context, start func(msg jetstream.Msg, release func())) {
	type fetched struct {
		msg  jetstream.Msg
		free func()
	}
	buffer := make(chan fetched, w.o.prefetch)
	go func() {
		defer close(buffer)
		w.fetchInto(ctx, w.o.prefetch, func(msg jetstream.Msg, free func()) { buffer <- fetched{msg, free} })
	}()
	slots := make(chan struct{}, w.o.maxInFlight)
	for f := range buffer {
		if !w.takeSlot(ctx, slots) {
			w.handBack(f.msg)
			f.free()
			continue
		}
		f.free()
		start(f.msg, func() { release(slots, 1) })
	}
}

// takeSlot takes a handler slot, blocking until one is free; false, with
// no slot taken, when ctx ended first or meanwhile (a draining worker
// starts no buffered job).
func (w *Worker) takeSlot(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	if ctx.Err() != nil {
		release(slots, 1)
		return false
	}
	return true
}
