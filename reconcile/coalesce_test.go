package reconcile

import (
	"testing"
	"time"
)

func TestCoalescerWaitsForQuietButNotForever(t *testing.T) {
	now := time.Unix(0, 0)
	c := newCoalescer(50*time.Millisecond, time.Second, func() time.Time { return now })
	step := func(d time.Duration) { now = now.Add(d) }

	if w := c.wait("untouched"); w != 0 {
		t.Fatalf("a key with no recorded change waits %s, want 0 (drift events are not held back)", w)
	}
	c.changed("k")
	if w := c.wait("k"); w != 50*time.Millisecond {
		t.Fatalf("right after a change: wait %s, want 50ms", w)
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

	// A key that never stops changing goes through after max.
	c.changed("busy")
	for range 99 {
		step(10 * time.Millisecond)
		c.changed("busy")
	}
	step(10 * time.Millisecond)
	if w := c.wait("busy"); w != 0 {
		t.Fatalf("after 1s of constant change: wait %s, want 0", w)
	}
}
