package reconcile

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"
)

// openWatch watches the whole spec bucket from its current values.
func (c *Controller) openWatch(ctx context.Context) (SpecWatch, error) {
	w, err := c.deps.Specs.Watch(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch spec bucket: %w", err)
	}
	return w, nil
}

// watchLoop consumes w until ctx ends. When the periodic check finds that
// the bucket was deleted and created again, it forgets every cached entry
// and watches the new bucket from its initial values: keys it no longer
// holds leave their children behind as orphans, never deleted.
func (c *Controller) watchLoop(ctx context.Context, w SpecWatch) {
	log := zerolog.Ctx(ctx)
	for {
		recreated := c.consume(ctx, w)
		w.Stop()
		if !recreated {
			return
		}
		log.Warn().Msg("spec bucket was recreated: re-reading it; children of keys it no longer holds are kept as orphans")
		c.specs.reset()
		c.settled.clear()
		if created, err := c.deps.Specs.Incarnation(ctx); err == nil {
			c.incarnation.Store(&created)
		}
		for {
			var err error
			if w, err = c.openWatch(ctx); err == nil {
				break
			}
			log.Warn().Err(err).Msg("re-open spec watch")
			select {
			case <-ctx.Done():
				return
			case <-c.clock.After(c.cfg.Recheck):
			}
		}
	}
}

// consume feeds watch events into the cache and the queue until ctx ends,
// the watch closes, or the bucket is found recreated (then it returns
// true). The initial values are remembered so that Ready turns true only
// once every one of them has been reconciled.
func (c *Controller) consume(ctx context.Context, w SpecWatch) (recreated bool) {
	log := zerolog.Ctx(ctx)
	for {
		select {
		case <-ctx.Done():
			return false
		case <-c.recreated:
			return true
		case ev, ok := <-w.Events():
			if !ok {
				if err := w.Err(); err != nil && ctx.Err() == nil {
					log.Error().Err(err).Msg("spec watch ended")
				}
				return false
			}
			c.handleEvent(ev)
		}
	}
}

func (c *Controller) handleEvent(ev Event) {
	if ev.Synced {
		c.synced.Store(true)
		c.checkReady()
		return
	}
	if !c.specs.observe(ev.Entry) {
		return
	}
	// A new revision is new work: its retries start from the shortest
	// delay. Counting the failures of every revision together let a key
	// changed often during a short outage (each change reconciled, each
	// failing) reach the 5-minute cap, so its last revision, often a
	// delete, waited that long after the outage ended.
	c.queue.Forget(ev.Key)
	if !c.synced.Load() {
		c.pending.add(ev.Key)
		c.enqueue(ev.Key)
		return
	}
	if wait := c.coalesce.changed(ev.Key); wait > 0 {
		c.enqueueAfter(ev.Key, wait)
	} else {
		c.enqueue(ev.Key)
	}
}

// markDone records that key has been reconciled once (successfully or
// not), for readiness.
func (c *Controller) markDone(key string) {
	c.pending.remove(key)
	c.checkReady()
}

func (c *Controller) checkReady() {
	if c.ready.Load() || !c.synced.Load() {
		return
	}
	if c.pending.len() == 0 {
		c.ready.Store(true)
	}
}
