package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/tinyctl/tinyctl/bus"
)

// WatchOptions select what a Watcher delivers and how it recovers.
type WatchOptions struct {
	// Keys are key filters (NATS wildcards allowed); empty means every key.
	Keys []string
	// AfterRevision resumes a watch: every change with a higher revision
	// is delivered, oldest first, and nothing at or below it. Zero starts
	// with the latest revision of every key (markers included).
	AfterRevision uint64
	// Backoff spaces re-creation attempts after failures (zero fields take
	// bus.DefaultBackoff's values).
	Backoff wait.Backoff
	// OnRestart, if set, is called from the watcher's goroutine with the
	// reason each time the watch must be re-created (a reconnect, a lost
	// consumer, or a failed re-creation attempt). For logs and metrics.
	OnRestart func(reason error)
}

// Event is one item of a watch: a KV entry (put, delete or purge), or,
// with InitialDone set and Entry zero, the marker that every initial value
// has been delivered.
type Event struct {
	Entry
	InitialDone bool
}

// Why a watch is re-created.
var (
	errReconnected = errors.New("bus: watch: connection re-established")
	errWatchClosed = errors.New("bus: watch: consumer closed")
)

// watchOpenTimeout bounds one consumer creation.
const watchOpenTimeout = 10 * time.Second

// Watcher delivers the changes of a KV bucket on Events, in this order:
//
//  1. the initial values: with WatchOptions.AfterRevision zero, the latest
//     revision of every matching key, delete and purge markers included;
//     otherwise every revision after AfterRevision;
//  2. exactly one Event with InitialDone set;
//  3. every later change as it happens.
//
// Entries arrive in revision order, so the changes of one key are always
// in order, and no revision is delivered twice. Delete and purge markers
// are events; a key missing from the initial values was never deleted by
// that absence.
//
// The watch survives disconnects and server restarts: after a reconnect,
// or when the server drops its consumer, the Watcher stops the old
// consumer and creates a new one that resumes after the last revision it
// delivered (retrying with backoff), so nothing is lost or replayed. The
// InitialDone marker is not repeated.
//
// A bucket deleted and created again under the same name restarts its
// revisions at 1, which a resumed watch would skip: the Watcher does not
// detect this. Callers that must notice compare SpecStore.Info's Created
// time (Bucket.Info) periodically and start a new watch from zero
// (package reconcile does).
//
// Events is closed when the watch's context is cancelled, Stop is called,
// or the connection is closed; Err then says why. Read Events promptly:
// a slow reader holds back delivery (and, past the client's buffers, makes
// the watch re-create itself).
type Watcher struct {
	b        *Bucket
	opts     WatchOptions
	events   chan Event
	cancel   context.CancelFunc
	done     chan struct{}
	last     atomic.Uint64
	restarts atomic.Uint64
	initial  bool
	err      error
}

// Watch streams the bucket's changes; see Watcher for the contract. The
// first consumer is created before Watch returns, so a missing permission
// or bucket fails the call.
func (b *Bucket) Watch(ctx context.Context, opts WatchOptions) (*Watcher, error) {
	if b.scoped != nil {
		return nil, fmt.Errorf("bus: watch %s: %w", b.name, ErrScoped)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{b: b, opts: opts, events: make(chan Event, 64), cancel: cancel, done: make(chan struct{})}
	w.last.Store(opts.AfterRevision)
	reconnected, unsubscribe := b.c.NotifyReconnect()
	inner, err := w.open(ctx)
	if err != nil {
		unsubscribe()
		cancel()
		return nil, err
	}
	go w.run(ctx, inner, reconnected, unsubscribe)
	return w, nil
}

// Events returns the channel of watch events; see Watcher.
func (w *Watcher) Events() <-chan Event { return w.events }

// LastRevision returns the revision of the last entry delivered (or
// AfterRevision before any). Resume a later watch after it.
func (w *Watcher) LastRevision() uint64 { return w.last.Load() }

// Restarts returns how many times the watch has been re-created.
func (w *Watcher) Restarts() uint64 { return w.restarts.Load() }

// Stop ends the watch, deletes its consumer and waits until Events is
// closed.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}

// Err returns why the watch ended, once Events is closed: the context's
// error, or an error saying the connection was closed.
func (w *Watcher) Err() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

func (w *Watcher) run(ctx context.Context, inner *consumer, reconnected <-chan struct{}, unsubscribe func()) {
	defer close(w.done)
	defer close(w.events)
	defer unsubscribe()
	for {
		reason := w.pump(ctx, inner, reconnected)
		w.stopInner(inner)
		if w.err = w.ended(ctx); w.err != nil {
			return
		}
		w.restarts.Add(1)
		inner = w.reopen(ctx, reason)
		if inner == nil {
			w.err = w.ended(ctx)
			return
		}
	}
}

// ended returns non-nil when the watch must end rather than be re-created.
func (w *Watcher) ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.b.c.Closed() {
		return errors.New("bus: watch: connection closed")
	}
	return nil
}

// pump forwards events until the context ends, the connection comes back
// (the consumer may be gone), or the consumer's channel closes.
func (w *Watcher) pump(ctx context.Context, inner *consumer, reconnected <-chan struct{}) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-reconnected:
			return errReconnected
		case e, ok := <-inner.Updates():
			if !ok {
				return errWatchClosed
			}
			if err := w.forward(ctx, e); err != nil {
				return err
			}
		}
	}
}

// forward delivers one update: the first initial-values marker, and
// entries newer than the last one delivered.
func (w *Watcher) forward(ctx context.Context, e jetstream.KeyValueEntry) error {
	var ev Event
	switch {
	case e == nil && w.initial:
		return nil
	case e == nil:
		ev.InitialDone = true
	case e.Revision() <= w.last.Load():
		return nil
	default:
		ev.Entry = entryFromKV(e)
	}
	select {
	case w.events <- ev:
	case <-ctx.Done():
		return ctx.Err()
	}
	if ev.InitialDone {
		w.initial = true
	} else {
		w.last.Store(ev.Revision)
	}
	return nil
}

// reopen creates a new consumer resuming after the last delivered
// revision, retrying with backoff; nil means the watch must end. After a
// reconnect the first attempt is immediate.
func (w *Watcher) reopen(ctx context.Context, reason error) *consumer {
	for attempt := 0; ; attempt++ {
		if w.opts.OnRestart != nil {
			w.opts.OnRestart(reason)
		}
		if attempt > 0 || !errors.Is(reason, errReconnected) {
			if !bus.SleepCtx(ctx, bus.Delay(w.opts.Backoff, attempt)) {
				return nil
			}
		}
		if w.ended(ctx) != nil {
			return nil
		}
		inner, err := w.open(ctx)
		if err == nil {
			return inner
		}
		reason = err
	}
}

// open creates a consumer: resumed after the last delivered revision when
// there is one, else the latest value per key. Creation is bounded by
// watchOpenTimeout and fails fast on a permission violation; the consumer
// then lives until ctx ends or it is stopped.
func (w *Watcher) open(ctx context.Context) (*consumer, error) {
	var opts []jetstream.WatchOpt
	if last := w.last.Load(); last > 0 {
		opts = append(opts, jetstream.ResumeFromRevision(last+1))
	}
	ctx, cancel := context.WithCancel(ctx)
	pctx := newPhaseCtx(ctx)
	timer := time.AfterFunc(watchOpenTimeout, func() {
		pctx.abort(context.DeadlineExceeded, context.DeadlineExceeded)
	})
	defer timer.Stop()
	stop := w.b.c.OnViolation(w.b.apiPatterns(), func(cause error) { pctx.abort(context.Canceled, cause) })
	defer stop()
	// WatchFiltered rewrites its keys slice, so hand it a copy.
	inner, err := w.b.kv.WatchFiltered(pctx, slices.Clone(w.opts.Keys), opts...)
	if err == nil && !pctx.settle() {
		_ = inner.Stop()
		err = pctx.Cause()
	}
	if err != nil {
		cancel()
		if cause := pctx.Cause(); errors.Is(cause, bus.ErrPermissionDenied) {
			err = cause
		}
		return nil, bus.Classify("watch "+w.b.name, err)
	}
	return &consumer{KeyWatcher: inner, cancel: cancel}, nil
}

// consumer is one KV watcher of the client library and the function that
// ends the context it lives in.
type consumer struct {
	jetstream.KeyWatcher
	cancel context.CancelFunc
}

// stopInner stops a consumer (deleting it on the server when it still
// exists) and drains what it still holds so its goroutine can finish.
func (w *Watcher) stopInner(inner *consumer) {
	_ = inner.Stop() // the consumer may already be gone with a restarted server
	inner.cancel()
	go func() {
		for range inner.Updates() {
		}
	}()
}
