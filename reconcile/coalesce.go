package reconcile

import (
	"sync"
	"time"
)

// coalescer holds back a key that is still changing, so that a burst of
// puts to one key costs one reconcile instead of one per revision the
// workers happen to catch: a changed key is reconciled once no newer
// revision has arrived for quiet, or once it has waited max since its first
// unreconciled change (a key that never stops changing still progresses).
type coalescer struct {
	quiet, max time.Duration
	now        func() time.Time

	mu     sync.Mutex
	bursts map[string]burst
}

// burst is when a key's unreconciled changes began and last arrived.
type burst struct{ first, last time.Time }

func newCoalescer(quiet, max time.Duration, now func() time.Time) *coalescer {
	return &coalescer{quiet: quiet, max: max, now: now, bursts: map[string]burst{}}
}

// changed records a new revision of key.
func (c *coalescer) changed(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	b := c.bursts[key]
	if b.first.IsZero() {
		b.first = now
	}
	b.last = now
	c.bursts[key] = b
}

// wait returns how much longer key should wait; zero means reconcile it
// now, and forgets its burst.
func (c *coalescer) wait(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.bursts[key]
	if !ok {
		return 0
	}
	now := c.now()
	w := b.last.Add(c.quiet).Sub(now)
	if capped := b.first.Add(c.max).Sub(now); capped < w {
		w = capped
	}
	if w <= 0 {
		delete(c.bursts, key)
		return 0
	}
	return w
}
