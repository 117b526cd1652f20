package reconcile

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// WakeDeadLetters reconciles the component whose work-queue stream is
// stream (a max-deliveries advisory named it): the reconcile moves its
// dead jobs (ensureDeadLetters). A stream that is no component's, or
// whose component this controller does not know, wakes nothing; it says
// whether it woke one.
func (c *Controller) WakeDeadLetters(stream string) bool {
	ns, name, ok := render.ComponentOfStream(stream)
	if !ok {
		return false
	}
	key := api.Key(ns, name)
	if !c.specs.known(key) {
		return false
	}
	c.enqueue(key)
	return true
}

// deadLettered reports the jobs of stream a sweep moved.
func (c *Controller) deadLettered(ctx context.Context, stream string, moved int) {
	if moved == 0 {
		return
	}
	ns, name, _ := render.ComponentOfStream(stream)
	zerolog.Ctx(ctx).Warn().Int("jobs", moved).Str("stream", stream).
		Msg("jobs used up their deliveries: moved to the dead-letter stream (tinyctl jobs dead)")
	c.obs.DeadLettered(api.Key(ns, name), moved)
}
