package reconcile

import (
	"fmt"
	"testing"
	"time"
)

func TestCoalescerLetsALoneChangeThroughAndHoldsABurst(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCoalescer(50*time.Millisecond, time.Second, func() time.Time { return now })
	step := func(d time.Duration) { now = now.Add(d) }

	if w := c.wait("untouched"); w != 0 {
		t.Fatalf("a key with no recorded change waits %s, want 0 (drift events are not held back)", w)
	}
	if d := c.changed("k"); d != 0 {
		t.Fatalf("the first change to a quiet key is queued after %s, want at once", d)
	}
	if w := c.wait("k"); w != 0 {
		t.Fatalf("a lone change to a quiet key waits %s, want 0", w)
	}

	// A change soon after a reconciled one is the start of a burst.
	step(10 * time.Millisecond)
	if d := c.changed("k"); d != 50*time.Millisecond {
		t.Fatalf("a change 10ms after the last is queued after %s, want 50ms", d)
	}
	step(30 * time.Millisecond)
	c.changed("k") // still changing: the quiet period starts again
	step(30 * time.Millisecond)
	if w := c.wait("k"); w != 20*time.Millisecond {
		t.Fatalf("30ms after the last change: wait %s, want 20ms", w)
	}
	step(20 * time.Millisecond)
	if w := c.wait("k"); w != 0 {
		t.Fatalf("after 50ms of quiet: wait %s, want 0", w)
	}
	if w := c.wait("k"); w != 0 {
		t.Fatalf("a reconciled burst is forgotten; wait %s, want 0", w)
	}

	// Quiet again for the period: the next change goes through at once.
	step(50 * time.Millisecond)
	if d := c.changed("k"); d != 0 {
		t.Fatalf("after 50ms of quiet a change is queued after %s, want at once", d)
	}
	// A second change before the first was reconciled joins it in a burst.
	step(time.Millisecond)
	c.changed("k")
	if w := c.wait("k"); w != 50*time.Millisecond {
		t.Fatalf("two changes 1ms apart: wait %s, want 50ms", w)
	}

	// A key that never stops changing goes through after max.
	c.changed("busy")
	c.wait("busy") // the first change, at once
	for range 101 {
		step(10 * time.Millisecond)
		c.changed("busy")
	}
	if w := c.wait("busy"); w != 0 {
		t.Fatalf("after 1s of constant change: wait %s, want 0", w)
	}
}

func TestCoalescerForgetsQuietKeys(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCoalescer(50*time.Millisecond, time.Second, func() time.Time { return now })
	for i := range sweepEvery - 2 {
		key := fmt.Sprint("k", i)
		c.changed(key)
		c.wait(key)
	}
	c.changed("held") // changed and not reconciled: kept
	if c.len() != sweepEvery-1 {
		t.Fatalf("remembers %d keys, want %d", c.len(), sweepEvery-1)
	}
	now = now.Add(50 * time.Millisecond)
	c.changed("trigger") // the sweepEvery-th change sweeps first
	if c.len() != 2 {
		t.Fatalf("after a sweep remembers %d keys, want 2 (the held one and the new one)", c.len())
	}
}

// len is how many keys the coalescer remembers.
func (c *coalescer) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.bursts)
}
