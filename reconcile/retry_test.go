package reconcile

import (
	"fmt"
	"testing"
	"time"
)

// TestRetriesOfKeysThatFailedTogetherAreSpreadOut: keys that failed the
// same number of times (a broker outage fails them all at once) are not
// retried in step, and each delay stays within a fifth above its
// exponential step and the cap.
func TestRetriesOfKeysThatFailedTogetherAreSpreadOut(t *testing.T) {
	cfg := Config{RetryBase: 100 * time.Millisecond, RetryMax: time.Second}.WithDefaults()
	l := retryLimiter(cfg)
	seen := map[time.Duration]bool{}
	for i := range 50 {
		key := fmt.Sprint("ns.key-", i)
		for n := range 6 {
			d := l.When(key)
			step := min(cfg.RetryBase<<n, cfg.RetryMax)
			if d < step || d > step+step/5 {
				t.Fatalf("retry %d of %s after %s, want within [%s, %s]", n, key, d, step, step+step/5)
			}
			if n == 2 {
				seen[d] = true
			}
		}
	}
	if len(seen) < 10 {
		t.Errorf("50 keys' third retries fell on %d distinct delays, want them spread out", len(seen))
	}
}
