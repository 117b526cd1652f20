package client

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
)

// retryInterval spaces re-reads after a transient failure during a watch.
const retryInterval = time.Second

// expiryMargin is added to a heartbeat's expiry time before re-reading,
// so that the re-read sees it as expired.
const expiryMargin = 50 * time.Millisecond

// WatchOptions tune WatchStatus.
type WatchOptions struct {
	// ReadTimeout bounds each re-read (0: no bound).
	ReadTimeout time.Duration
	// OnError, if set, receives each transient read failure; the watch
	// goes on and reads again.
	OnError func(error)
}

// WatchStatus calls emit with view(snapshot) now, and again each time the view
// changes: it re-reads a snapshot on every change in the spec, status and
// heartbeat buckets, and when a live heartbeat of a shown row expires by
// the clock. Heartbeats that only renew a live cluster do not count as
// changes. The Client must have been opened with Create (a missing bucket
// cannot be watched).
//
// WatchStatus returns nil when ctx is cancelled, emit's error, or the first
// read or watch failure that retrying cannot fix.
func (s *Client) WatchStatus(ctx context.Context, view func(Snapshot) []Row, opts WatchOptions, emit func([]Row) error) error {
	if s.specs == nil || s.statuses == nil {
		return errors.New("watch status: the spec and status buckets must exist")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed, failed, err := s.changes(ctx)
	if err != nil {
		return err
	}
	var last []Row
	for shown := false; ; {
		wait, err := s.refresh(ctx, view, opts, func(rows []Row) error {
			if shown && sameRows(rows, last) {
				return nil
			}
			shown, last = true, rows
			return emit(rows)
		})
		if err != nil || ctx.Err() != nil {
			return err
		}
		if stop, err := waitForChange(ctx, changed, failed, wait); stop {
			return err
		}
	}
}

// refresh reads a snapshot and shows its view. It returns how long to wait
// before reading again without a change (0: until a change), or the error
// that ends the watch.
func (s *Client) refresh(ctx context.Context, view func(Snapshot) []Row, opts WatchOptions, show func([]Row) error) (time.Duration, error) {
	readCtx, cancel := ctx, context.CancelFunc(func() {})
	if opts.ReadTimeout > 0 {
		readCtx, cancel = context.WithTimeout(ctx, opts.ReadTimeout)
	}
	snap, err := s.Snapshot(readCtx)
	cancel()
	switch {
	case ctx.Err() != nil:
		return 0, nil
	case err != nil && bus.IsTransient(err):
		if opts.OnError != nil {
			opts.OnError(err)
		}
		return retryInterval, nil
	case err != nil:
		return 0, err
	}
	rows := view(snap)
	return nextExpiry(rows, snap.Now), show(rows)
}

// waitForChange blocks until a bucket changes, wait has passed (when
// positive), a watch fails or ctx ends. stop says the watch must end, with
// err (nil when ctx ended).
func waitForChange(ctx context.Context, changed <-chan struct{}, failed <-chan error, wait time.Duration) (stop bool, err error) {
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return true, nil
	case err := <-failed:
		return true, err
	case <-changed:
	case <-timeout:
	}
	return false, nil
}

// nextExpiry returns how long until the first live heartbeat among rows
// expires by the clock, or 0 when none is live.
func nextExpiry(rows []Row, now time.Time) time.Duration {
	var next time.Duration
	for _, r := range rows {
		if r.Status == nil || r.Stale() || r.Status.Heartbeat == nil {
			continue
		}
		d := r.Status.Heartbeat.Expires().Sub(now) + expiryMargin
		if d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	return next
}

// sameRows compares what a view shows, ignoring heartbeat renewals.
func sameRows(a, b []Row) bool {
	type shown struct {
		key    string
		latest uint64
		status *api.Status
		stale  bool
	}
	sig := func(rows []Row) []shown {
		out := make([]shown, len(rows))
		for i, r := range rows {
			out[i] = shown{key: r.Key, latest: r.LatestRevision, stale: r.Stale()}
			if r.Status != nil {
				out[i].status = &r.Status.Status
			}
		}
		return out
	}
	return reflect.DeepEqual(sig(a), sig(b))
}

// changes starts watches on the three buckets. changed receives (without
// blocking, coalesced) after every change that follows the initial values;
// failed receives why a watch ended before ctx did.
func (s *Client) changes(ctx context.Context) (changed <-chan struct{}, failed <-chan error, err error) {
	ch := make(chan struct{}, 1)
	fail := make(chan error, 3)
	notify := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	for _, start := range []func(context.Context, kv.WatchOptions) (*kv.Watcher, error){s.specs.Watch, s.statuses.Watch} {
		w, err := start(ctx, kv.WatchOptions{})
		if err != nil {
			return nil, nil, err
		}
		go forward(ctx, w, notify, fail)
	}
	if err := s.watchHeartbeats(ctx, notify, fail); err != nil {
		return nil, nil, err
	}
	return ch, fail, nil
}

// forward calls notify for each event after the initial values.
func forward(ctx context.Context, w *kv.Watcher, notify func(), fail chan<- error) {
	initial := true
	for ev := range w.Events() {
		if ev.InitialDone {
			initial = false
		} else if !initial {
			notify()
		}
	}
	if ctx.Err() == nil {
		fail <- w.Err()
	}
}

// watchHeartbeats calls notify for every heartbeat written, expired or
// removed from now on.
func (s *Client) watchHeartbeats(ctx context.Context, notify func(), fail chan<- error) error {
	kv, err := s.conn.JetStream().KeyValue(ctx, status.DefaultHeartbeatBucket)
	if err != nil {
		return err
	}
	w, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		return err
	}
	go func() {
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					fail <- errors.New("watch heartbeats: the watch ended")
					return
				}
				if e != nil {
					notify()
				}
			}
		}
	}()
	return nil
}
