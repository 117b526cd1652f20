package bus

import (
	"context"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// DefaultBackoff is how reconnects and watch re-creations are spaced when
// a caller sets no backoff: 100ms doubling to 10s, each step plus up to a
// fifth of itself so that many clients do not retry in step.
func DefaultBackoff() wait.Backoff {
	return wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Jitter: 0.2, Cap: 10 * time.Second}
}

// withDefaults fills a zero Duration, Factor or Cap from DefaultBackoff.
func withDefaults(b wait.Backoff) wait.Backoff {
	d := DefaultBackoff()
	if b.Duration <= 0 {
		b.Duration = d.Duration
	}
	if b.Factor <= 0 {
		b.Factor = d.Factor
	}
	if b.Cap < b.Duration {
		b.Cap = max(d.Cap, b.Duration)
	}
	return b
}

// Delay returns the wait before retry number attempt (0-based) of b:
// Duration × Factor^attempt, capped at Cap, plus up to Jitter of itself.
// Zero fields of b take DefaultBackoff's values. It steps a wait.Backoff,
// indexed by attempt rather than kept stepping, because nats.go's
// reconnect callback hands over its own attempt count: the reconnects and
// the watch re-creations share one schedule without state to reset.
func Delay(b wait.Backoff, attempt int) time.Duration {
	b = withDefaults(b)
	b.Steps = math.MaxInt32
	d := b.Step()
	for i := 0; i < attempt; i++ {
		if b.Steps == 0 { // capped: every later step is Cap plus jitter
			return b.Step()
		}
		d = b.Step()
	}
	return d
}

// SleepCtx waits d or until ctx is done; it reports whether the full wait
// passed.
func SleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
