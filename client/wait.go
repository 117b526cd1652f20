package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/overrides"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/status"
)

// Awaited is one revision of one component to wait for.
type Awaited struct {
	// Key is the spec key, "<namespace>.<name>".
	Key string
	// Revision is the revision the clusters must have reconciled (a later
	// one will do).
	Revision uint64
}

// Progress is how far an Awaited has got on every live cluster its
// placement selects.
type Progress struct {
	Awaited
	// Done: every such cluster reports the condition True at Revision or
	// later, and there is at least one.
	Done bool
	// Failed: a cluster reports, at Revision or later, what waiting cannot
	// change: Stalled (not retried until a new revision) or a rollout past
	// its progress deadline.
	Failed bool
	// Clusters are the placed clusters, sorted by name.
	Clusters []ClusterProgress
}

// ClusterProgress is one placed cluster's answer.
type ClusterProgress struct {
	Cluster string
	// Met: the condition is True at Revision or later.
	Met bool
	// ObservedRevision is the revision the cluster last reported on (0:
	// none yet).
	ObservedRevision uint64
	// Reason and Message say why it is not met yet.
	Reason, Message string
}

// ReasonNoCluster is the reason given when no live cluster's labels and name
// are selected by a target's placement.
const ReasonNoCluster = "NoCluster"

// ProgressOf judges t in snap: which live clusters (beats, judged at
// now) its placement selects, and whether each reports condition cond True
// at its revision.
func ProgressOf(snap Snapshot, beats map[string]status.HeartbeatRecord, t Awaited, cond string, now time.Time) Progress {
	p := Progress{Awaited: t}
	placed := placedOn(snap, beats, t.Key, now)
	records := map[string]*status.Record{}
	for i := range snap.Statuses {
		if r := &snap.Statuses[i]; r.Component == t.Key && r.Err == nil {
			records[r.Cluster] = r
		}
	}
	for _, name := range placed {
		c := ClusterProgress{Cluster: name}
		rec := records[name]
		switch {
		case rec == nil:
			c.Reason, c.Message = ReasonNotReconciled, "no status reported yet"
		case rec.ObservedRevision < t.Revision:
			c.ObservedRevision, c.Reason = rec.ObservedRevision, ReasonNotReconciled
			c.Message = fmt.Sprintf("reports revision %d, not yet %d", rec.ObservedRevision, t.Revision)
		default:
			c.ObservedRevision = rec.ObservedRevision
			c.Met = rec.IsTrue(cond)
			c.Reason, c.Message = why(rec.Status, cond)
			p.Failed = p.Failed || hopeless(rec.Status)
		}
		p.Clusters = append(p.Clusters, c)
	}
	p.Done = len(p.Clusters) > 0 && !slices.ContainsFunc(p.Clusters, func(c ClusterProgress) bool { return !c.Met })
	return p
}

// placedOn returns the live clusters the placement of the component under
// key selects, sorted.
func placedOn(snap Snapshot, beats map[string]status.HeartbeatRecord, key string, now time.Time) []string {
	var comp api.Component
	for _, e := range snap.Specs {
		if e.Key == key {
			comp, _ = decode.Component(e.Value)
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(beats)) {
		hb := beats[name]
		if !status.Stale(&hb, now) && overrides.Places(comp, overrides.Cluster{Name: name, Labels: hb.Labels}) {
			out = append(out, name)
		}
	}
	return out
}

// why is the reason and message a status gives for condition cond: the
// condition's own when it is False, else the Degraded or Stalled one's.
func why(st api.Status, cond string) (string, string) {
	c, ok := st.Condition(cond)
	if !ok {
		return "", fmt.Sprintf("the cluster's controller reports no %s condition (an older version?)", cond)
	}
	return c.Reason, c.Message
}

// hopeless reports whether st says that waiting cannot help.
func hopeless(st api.Status) bool {
	if st.IsTrue(api.ConditionStalled) {
		return true
	}
	d, ok := st.Condition(api.ConditionDegraded)
	return ok && d.Status == api.ConditionTrue && d.Reason == reasons.ProgressDeadlineExceeded
}

// Summary says in one line per cluster what is still awaited.
func (p Progress) Summary() string {
	if len(p.Clusters) == 0 {
		return fmt.Sprintf("%s: %s: no live cluster's name and labels are selected by its placement (tinyctl clusters lists them)", p.Key, ReasonNoCluster)
	}
	var lines []string
	for _, c := range p.Clusters {
		if c.Met {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s on cluster %s: %s: %s", p.Key, c.Cluster, c.Reason, c.Message))
	}
	return strings.Join(lines, "\n")
}

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
func (s *Client) Wait(ctx context.Context, targets []Awaited, cond string, opts WatchOptions) ([]Progress, error) {
	if s.specs == nil || s.statuses == nil {
		return nil, errors.New("wait: the spec and status buckets must exist")
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed, failed, err := s.changes(wctx)
	if err != nil {
		return nil, err
	}
	var last []Progress
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
			if slices.ContainsFunc(last, func(p Progress) bool { return p.Failed }) {
				return last, ErrWaitFailed
			}
			if !slices.ContainsFunc(last, func(p Progress) bool { return !p.Done }) {
				return last, nil
			}
		}
		if stop, err := waitForChange(ctx, changed, failed, recheckEvery); stop {
			return last, cmp.Or(err, ctx.Err())
		}
	}
}

// progress reads the buckets once and assesses every target.
func (s *Client) progress(ctx context.Context, targets []Awaited, cond string, opts WatchOptions) ([]Progress, error) {
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
	out := make([]Progress, 0, len(targets))
	for _, t := range targets {
		out = append(out, ProgressOf(snap, beats, t, cond, s.now()))
	}
	return out, nil
}
