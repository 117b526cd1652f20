package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
)

// readySeen is when the driver saw a component's status Ready at a
// revision.
type readySeen struct {
	rev uint64
	at  time.Time
}

// readiness is what the driver has seen reported Ready: serve's status
// records (tracker) or the baseline's Component statuses (crTracker).
type readiness interface {
	readyAt(key string, rev uint64) (time.Time, bool)
	firstReady(key string, rev uint64) (readySeen, bool)
	waitAllReady(ctx context.Context, want map[string]uint64, within time.Duration, alive func() error) error
}

// seenLog is, for every component, each revision it was reported Ready at
// and when the driver saw it.
type seenLog struct {
	mu    sync.Mutex
	ready map[string][]readySeen
}

func (t *seenLog) saw(key string, rev uint64) {
	now := time.Now()
	t.mu.Lock()
	t.ready[key] = append(t.ready[key], readySeen{rev, now})
	t.mu.Unlock()
}

// tracker follows the status bucket. A status record is the last write of
// a reconcile, so Ready at revision r means every child of r has been
// applied.
type tracker struct {
	seenLog
	w *kv.Watcher
}

// track starts following e's status bucket; stop it with ctx.
func (e *env) track(ctx context.Context) (*tracker, error) {
	w, err := e.statuses.Watch(ctx, kv.WatchOptions{})
	if err != nil {
		return nil, err
	}
	t := &tracker{seenLog: seenLog{ready: map[string][]readySeen{}}, w: w}
	go t.run()
	return t, nil
}

func (t *tracker) run() {
	for ev := range t.w.Events() {
		if ev.InitialDone || ev.Op != kv.OpPut {
			continue
		}
		st, err := status.Decode(ev.Entry)
		if err != nil || !st.IsTrue(api.ConditionApplied) {
			continue
		}
		t.saw(st.Component, st.ObservedRevision)
	}
}

// readyAt returns when key was first seen Ready at revision rev or later.
func (t *seenLog) readyAt(key string, rev uint64) (time.Time, bool) {
	s, ok := t.firstReady(key, rev)
	return s.at, ok
}

// firstReady returns the first Ready seen for key at revision rev or
// later: its revision (a later one when rev was never reported itself)
// and when.
func (t *seenLog) firstReady(key string, rev uint64) (readySeen, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.ready[key] {
		if s.rev >= rev {
			return s, true
		}
	}
	return readySeen{}, false
}

// readyCount counts the keys of want seen Ready at their revision or later.
func (t *seenLog) readyCount(want map[string]uint64) int {
	n := 0
	for k, rev := range want {
		if _, ok := t.readyAt(k, rev); ok {
			n++
		}
	}
	return n
}

// waitAllReady polls until every key of want is Ready at its revision, the
// check fails, or the deadline passes. A key seen Ready stays Ready, so
// each poll drops the keys found Ready and stops at the first that is
// not: a poll costs what became Ready since the last one. (Counting every
// key on every poll, as it did, cost 2.85 ms a poll at 30,000, about 14 %
// of a core, in the runs that poll only: serve's and the baselines', not
// the floor's.)
func (t *seenLog) waitAllReady(ctx context.Context, want map[string]uint64, within time.Duration, alive func() error) error {
	rest := make([]string, 0, len(want))
	for k := range want {
		rest = append(rest, k)
	}
	return poll(ctx, within, func() error {
		if err := alive(); err != nil {
			return permanent{err}
		}
		for len(rest) > 0 {
			last := rest[len(rest)-1]
			if _, ok := t.readyAt(last, want[last]); !ok {
				return notAllReady{t, want}
			}
			rest = rest[:len(rest)-1]
		}
		return nil
	})
}

// notAllReady says how many of want are Ready, counted when the error is
// read (once, when the wait gives up).
type notAllReady struct {
	t    *seenLog
	want map[string]uint64
}

func (e notAllReady) Error() string {
	return fmt.Sprintf("%d of %d components ready", e.t.readyCount(e.want), len(e.want))
}

// permanent stops poll at once.
type permanent struct{ error }

// poll calls check every 20 ms until it returns nil, returns a permanent
// error, ctx ends or within passes; the error then says what check said
// last.
func poll(ctx context.Context, within time.Duration, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return nil
		}
		if p, ok := err.(permanent); ok {
			return p.error
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", ctx.Err(), err)
		case <-tick.C:
		}
	}
}
