package status

import (
	"context"
	"sync"
	"time"
)

// serverClock is the reader's estimate of the NATS server's clock: the
// reader's own clock plus the offset measured at the last heartbeat read.
// Heartbeats carry the server's time of the write, so judging them by the
// server's clock makes staleness independent of how far the reader's (or
// the writer's) wall clock is from the server's: a CLI on a laptop an hour
// ahead must not see every cluster stale.
type serverClock struct {
	now func() time.Time

	mu         sync.Mutex
	offset     time.Duration
	measuredAt time.Time // by the reader's clock; zero: never
}

// remeasureEvery is how often a long-lived reader measures the offset
// again (a clock stepped by NTP); in between its own clock carries it.
const remeasureEvery = time.Minute

// Now returns the reader's clock corrected by the last measured offset.
func (c *serverClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now().Add(c.offset)
}

// measure asks the server for its clock (the heartbeat bucket's info) and
// keeps the offset from the reader's clock, taken at the midpoint of the
// round trip, unless it measured less than remeasureEvery ago. When the
// server cannot be asked (credentials scoped to a namespace, a server that
// does not say) the last offset stays.
func (c *serverClock) measure(ctx context.Context, server func(context.Context) (time.Time, error)) {
	before := c.now()
	c.mu.Lock()
	since := before.Sub(c.measuredAt)
	fresh := !c.measuredAt.IsZero() && since >= 0 && since < remeasureEvery
	c.mu.Unlock()
	if fresh {
		return
	}
	at, err := server(ctx)
	if err != nil || at.IsZero() {
		return
	}
	after := c.now()
	mid := before.Add(after.Sub(before) / 2)
	c.mu.Lock()
	c.offset, c.measuredAt = at.Sub(mid), after
	c.mu.Unlock()
}
