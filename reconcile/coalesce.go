package reconcile

import (
	"sync"
	"time"
)

// coalescer holds back a key that is still changing, so that a burst of
// puts to one key costs at most two reconciles instead of one per revision
// the workers happen to catch. The first change to a quiet key (none for
// quiet before it) goes through at once: most changes are lone ones, and
// holding each back for the quiet period was most of a put's latency. A
// change that follows another within quiet is held until no newer revision
// has arrived for quiet, or until it has waited max since its first
// unreconciled change (a key that never stops changing still progresses).
type coalescer struct {
	quiet, max time.Duration
	now        func() time.Time

	mu      sync.Mutex
	bursts  map[string]burst
	changes int
}

// burst is a key's recent changes: when its unreconciled ones began and
// when the last one arrived, whether any is unreconciled, and whether the
// unreconciled one is a lone change to a quiet key (reconciled at once).
type burst struct {
	first, last    time.Time
	pending, eager bool
}

// sweepEvery is how many changes pass between sweeps of the keys that have
// been quiet for the quiet period (they are remembered only that long).
const sweepEvery = 4096

func newCoalescer(quiet, max time.Duration, now func() time.Time) *coalescer {
	return &coalescer{quiet: quiet, max: max, now: now, bursts: map[string]burst{}}
}

// changed records a new revision of key and returns how long to wait
// before queueing it: 0 for the first change to a quiet key, else quiet.
func (c *coalescer) changed(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.sweep(now)
	b, seen := c.bursts[key]
	quietBefore := !seen || now.Sub(b.last) >= c.quiet
	if !b.pending {
		b.first, b.pending, b.eager = now, true, quietBefore
	} else {
		b.eager = false // a second change before the first was reconciled
	}
	b.last = now
	c.bursts[key] = b
	if b.eager {
		return 0
	}
	return c.quiet
}

// wait returns how much longer key should wait; zero means reconcile it
// now (its changes so far count as reconciled).
func (c *coalescer) wait(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.bursts[key]
	if !ok || !b.pending {
		return 0
	}
	now := c.now()
	w := time.Duration(0)
	if !b.eager {
		w = min(b.last.Add(c.quiet).Sub(now), b.first.Add(c.max).Sub(now))
	}
	if w <= 0 {
		b.pending = false
		c.bursts[key] = b
		return 0
	}
	return w
}

// sweep forgets, every sweepEvery changes, the keys whose changes are all
// reconciled and older than quiet: they count as quiet either way.
func (c *coalescer) sweep(now time.Time) {
	c.changes++
	if c.changes%sweepEvery != 0 {
		return
	}
	for k, b := range c.bursts {
		if !b.pending && now.Sub(b.last) >= c.quiet {
			delete(c.bursts, k)
		}
	}
}
