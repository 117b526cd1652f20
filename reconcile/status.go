package reconcile

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tinyctl/tinyctl/api"
)

// Condition types and statuses written to the status bucket.
const (
	CondReady    = "Ready"
	CondStalled  = "Stalled"
	CondOrphaned = "Orphaned"

	kindStream   = "Stream"
	kindConsumer = "Consumer"

	condTrue  = "True"
	condFalse = "False"
)

// statusCache remembers the last status written for each component of this
// cluster, so an unchanged status is not written again (a restart with
// nothing changed writes nothing).
type statusCache struct {
	mu sync.Mutex
	m  map[string]api.Status
}

func newStatusCache() *statusCache { return &statusCache{m: map[string]api.Status{}} }

func (s *statusCache) get(key string) (api.Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[key]
	return st, ok
}

func (s *statusCache) set(st api.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[st.Component] = st
}

// stream returns the stream the last status of key lists as ensured.
func (s *statusCache) stream(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.m[key].Children {
		if ch.Kind == kindStream {
			return ch.Name, true
		}
	}
	return "", false
}

func (s *statusCache) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// loadStatuses reads this cluster's status records once at start.
func (c *Controller) loadStatuses(ctx context.Context) error {
	recs, err := c.deps.Statuses.List(ctx)
	if err != nil {
		return fmt.Errorf("read status records: %w", err)
	}
	for _, r := range recs {
		if r.Cluster == c.cfg.Cluster.Name {
			c.status.set(r.Status)
		}
	}
	return nil
}

// report is the outcome of one reconcile, before it becomes a Status.
type report struct {
	revision   uint64
	conditions []api.Condition
	children   []api.Child
	err        error
}

// writeStatus stores the status of key unless it equals the last one
// written; unchanged conditions keep their transition time.
func (c *Controller) writeStatus(ctx context.Context, key string, r report) error {
	st := api.Status{
		Component:        key,
		Cluster:          c.cfg.Cluster.Name,
		ObservedRevision: r.revision,
		Conditions:       r.conditions,
		Children:         r.children,
	}
	if r.err != nil {
		st.Error = r.err.Error()
	}
	prev, ok := c.status.get(key)
	now := time.Now().UTC()
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = now
		if old, found := findCondition(prev.Conditions, st.Conditions[i].Type); ok && found && old.Status == st.Conditions[i].Status {
			st.Conditions[i].LastTransitionTime = old.LastTransitionTime
		}
	}
	if ok && sameStatus(prev, st) {
		return nil
	}
	st.UpdatedAt = now
	if _, err := c.deps.Statuses.Put(ctx, st); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	c.status.set(st)
	return nil
}

// removeStatus deletes the status record of key if one was written.
func (c *Controller) removeStatus(ctx context.Context, key string) error {
	if _, ok := c.status.get(key); !ok {
		return nil
	}
	if err := c.deps.Statuses.Delete(ctx, key, c.cfg.Cluster.Name); err != nil {
		return fmt.Errorf("delete status: %w", err)
	}
	c.status.forget(key)
	return nil
}

func findCondition(conds []api.Condition, typ string) (api.Condition, bool) {
	for _, c := range conds {
		if c.Type == typ {
			return c, true
		}
	}
	return api.Condition{}, false
}

// sameStatus compares everything but UpdatedAt.
func sameStatus(a, b api.Status) bool {
	return a.Component == b.Component && a.Cluster == b.Cluster &&
		a.ObservedRevision == b.ObservedRevision && a.Error == b.Error &&
		slices.EqualFunc(a.Conditions, b.Conditions, func(x, y api.Condition) bool {
			return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason &&
				x.Message == y.Message && x.LastTransitionTime.Equal(y.LastTransitionTime)
		}) &&
		slices.Equal(a.Children, b.Children)
}

// conditions builds Ready and Stalled for an outcome.
func conditions(err error) []api.Condition {
	if err == nil {
		return []api.Condition{
			{Type: CondReady, Status: condTrue, Reason: "Reconciled", Message: "every child is applied"},
			{Type: CondStalled, Status: condFalse, Reason: "Reconciled"},
		}
	}
	class, reason := Classify(err)
	stalled := api.Condition{Type: CondStalled, Status: condFalse, Reason: reason}
	if class == Permanent {
		stalled.Status = condTrue
		stalled.Message = "not retried until a new revision is published"
	}
	return []api.Condition{
		{Type: CondReady, Status: condFalse, Reason: reason, Message: err.Error()},
		stalled,
	}
}
