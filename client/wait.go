package client

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/client/progress"
)

// ErrWaitFailed is returned by Wait when a cluster reports what waiting
// cannot change.
var ErrWaitFailed = errors.New("will not become true without a new revision")

// recheckEvery bounds how long Wait goes without reading the buckets
// again: a cluster whose heartbeat expires stops counting as placed.
const recheckEvery = 2 * time.Second

// Wait blocks until every target is Done by condition cond on every live
// cluster it is placed on, a target Failed, or ctx ends. It reads the
// buckets again on every change, and at least every two seconds. It
// returns the last Progress of every target, and ErrWaitFailed, ctx's
// error or a read error when not all are done. The Client must have been
// opened with Create.
func (s *Client) Wait(ctx context.Context, targets []progress.Target, cond string, opts WatchOptions) ([]progress.Progress, error) {
	if s.specs == nil || s.statuses == nil {
		return nil, errors.New("wait: the spec and status buckets must exist")
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed, failed, err := s.changes(wctx)
	if err != nil {
		return nil, err
	}
	var last []progress.Progress
	for {
		next, err := s.progress(ctx, targets, cond, opts)
		switch {
		case err != nil && bus.IsTransient(err) && ctx.Err() == nil:
			if opts.OnError != nil {
				opts.OnError(err)
			}
		case err != nil:
			return last, err
		default:
			last = next
			if slices.ContainsFunc(last, func(p progress.Progress) bool { return p.Failed }) {
				return last, ErrWaitFailed
			}
			if !slices.ContainsFunc(last, func(p progress.Progress) bool { return !p.Done }) {
				return last, nil
			}
		}
		if stop, err := waitForChange(ctx, changed, failed, recheckEvery); stop {
			return last, cmp.Or(err, ctx.Err())
		}
	}
}

// progress reads the buckets once and assesses every target.
func (s *Client) progress(ctx context.Context, targets []progress.Target, cond string, opts WatchOptions) ([]progress.Progress, error) {
	if opts.ReadTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.ReadTimeout)
		defer cancel()
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	beats, err := s.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	var live []cluster.Identity
	for _, name := range slices.Sorted(maps.Keys(beats)) {
		if hb := beats[name]; !stale(&hb, snap.Now) {
			live = append(live, cluster.Identity{Name: name, Labels: hb.Labels})
		}
	}
	out := make([]progress.Progress, 0, len(targets))
	for _, t := range targets {
		out = append(out, progress.Of(latestOf(snap, t.Key), reportsOn(snap, t.Key), live, t, cond))
	}
	return out, nil
}

// latestOf is the latest value of the component under key (zero when it
// has none, or it does not decode).
func latestOf(snap Snapshot, key string) api.Component {
	for _, e := range snap.Components {
		if e.Key == key && e.Err == nil {
			return e.Component
		}
	}
	return api.Component{}
}

// reportsOn are the readable status records of the component under key.
func reportsOn(snap Snapshot, key string) []api.Status {
	var out []api.Status
	for _, r := range snap.Statuses {
		if r.Component == key && r.Err == nil {
			out = append(out, r.Status)
		}
	}
	return out
}
