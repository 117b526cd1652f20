package reconcile

import (
	"context"

	"github.com/rs/zerolog"
)

// work takes keys off the queue until it shuts down.
func (c *Controller) work(ctx context.Context) {
	for c.processNext(ctx) {
	}
}

// processNext reconciles one key. Done is always called; Forget on success
// and on failures that retrying cannot fix; AddRateLimited on transient
// failures; AddAfter(Recheck) while waiting for something outside.
func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if wait := c.coalesce.wait(key); wait > 0 {
		c.queue.AddAfter(key, wait) // still changing: let the burst settle
		return true
	}
	e, _ := c.specs.get(key)
	log := zerolog.Ctx(ctx).With().Str(LogKey, key).Uint64(logRevision, e.rev).Logger()
	ctx = log.WithContext(ctx)

	start := c.clock.Now()
	err := c.syncFor(ctx, key, e.rev)
	c.obs.Reconciled(key, c.clock.Since(start), err)
	c.markDone(key)
	if err == nil {
		c.settled.settle(key, e.rev, e.deleted)
		c.queue.Forget(key)
		return true
	}
	c.settled.unsettle(key)
	class, reason := Classify(err)
	ev := log.Warn()
	if class == Transient {
		ev = log.Info()
	}
	ev.Err(err).Stringer(logClass, class).Str(logReason, reason).Msg("reconcile failed")
	switch class {
	case Permanent:
		c.queue.Forget(key)
	case Waiting:
		c.queue.Forget(key)
		c.enqueueAfter(key, c.cfg.Recheck)
		c.obs.Retried(class)
	default:
		c.queue.AddRateLimited(key)
		c.obs.Retried(class)
	}
	return true
}
