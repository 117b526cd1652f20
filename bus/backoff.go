package bus

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is capped exponential backoff with jitter: attempt n waits
// Min*2^n, capped at Max, then spread by up to ±Jitter of itself so that
// many clients do not retry in step.
type Backoff struct {
	Min    time.Duration
	Max    time.Duration
	Jitter float64 // fraction in [0, 1]
}

// Defaults for a Backoff left zero.
const (
	defaultBackoffMin    = 100 * time.Millisecond
	defaultBackoffMax    = 10 * time.Second
	defaultBackoffJitter = 0.2
)

// withDefaults fills zero fields with the defaults.
func (b Backoff) withDefaults() Backoff {
	if b.Min <= 0 {
		b.Min = defaultBackoffMin
	}
	if b.Max < b.Min {
		b.Max = max(defaultBackoffMax, b.Min)
	}
	if b.Jitter <= 0 || b.Jitter > 1 {
		b.Jitter = defaultBackoffJitter
	}
	return b
}

// Delay returns the wait before retry number attempt (0-based).
func (b Backoff) Delay(attempt int) time.Duration {
	b = b.withDefaults()
	d := b.Min
	for i := 0; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	spread := float64(d) * b.Jitter
	d += time.Duration((rand.Float64()*2 - 1) * spread)
	return max(d, time.Millisecond)
}

// sleepCtx waits d or until ctx is done; it reports whether the full wait
// passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
