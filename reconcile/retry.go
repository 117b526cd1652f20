package reconcile

import (
	"math/rand/v2"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
)

// retryJitter is the largest fraction of a retry delay added at random.
const retryJitter = 0.2

// retryLimiter spaces the retries of failed keys: exponential from
// RetryBase to RetryMax per key, plus up to a fifth at random so that keys
// that failed together (a broker or API server outage) do not retry in
// step, and at most 50 a second (bursts of 300) overall.
func retryLimiter(cfg Config) workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter(
		jittered[string]{workqueue.NewTypedItemExponentialFailureRateLimiter[string](cfg.RetryBase, cfg.RetryMax)},
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(50), 300)},
	)
}

// jittered adds up to retryJitter of each delay its limiter returns.
type jittered[T comparable] struct {
	workqueue.TypedRateLimiter[T]
}

// When returns the wrapped limiter's delay for item plus its jitter.
func (j jittered[T]) When(item T) time.Duration {
	d := j.TypedRateLimiter.When(item)
	return d + time.Duration(rand.Float64()*retryJitter*float64(d))
}
