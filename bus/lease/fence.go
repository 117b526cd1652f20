package lease

import (
	"context"
	"errors"
	"time"

	"k8s.io/utils/clock"
)

// ErrNotLeader is returned instead of writing when the lease that fences
// a write is no longer valid.
var ErrNotLeader = errors.New("not the leader: lease expired or lost, write refused")

// Fence guards every write of a lease holder. Check refuses a write when
// the lease is no longer valid by this process's clock (which, unlike a
// goroutine, keeps running while the process is stopped), and bounds the
// write's context by the lease's fencing deadline, so a write that was
// about to be sent when the process was paused is cancelled when it
// resumes instead of landing after a new leader took over.
type Fence struct {
	// ValidUntil returns the current fencing deadline (Lease.ValidUntil).
	ValidUntil func() time.Time
	// Clock reads the time (default the real clock).
	Clock clock.PassiveClock
	// token is the lease's fencing token (Lease.Token).
	token string
}

// Token returns the fencing token of the lease whose writes f guards, for
// targets that can refuse a write older than one they hold (the API
// server, through the chart's admission policy: docs/leases.md). A zero
// Fence has none: "".
func (f Fence) Token() string { return f.token }

// Check returns ctx bounded by the fencing deadline, or ErrNotLeader when
// the deadline has passed. Call cancel when the write is done. A zero
// Fence lets every write pass unbounded (no lease, e.g. a single
// controller with leader election off).
func (f Fence) Check(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if f.ValidUntil == nil {
		return ctx, func() {}, nil
	}
	var now time.Time
	if f.Clock != nil {
		now = f.Clock.Now()
	} else {
		now = time.Now()
	}
	until := f.ValidUntil()
	if !now.Before(until) {
		return ctx, func() {}, ErrNotLeader
	}
	ctx, cancel := context.WithTimeout(ctx, until.Sub(now))
	return ctx, cancel, nil
}
