package reconcile

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/render"
	"github.com/tinyctl/tinyctl/workload"
)

// startWorkloads starts (or, after a refusal, retries) the informers Ready
// is judged on. Pods the controller may not list are logged once and left
// out: Ready is then judged on the Deployments alone.
func (c *Controller) startWorkloads(ctx context.Context) error {
	if c.workloads == nil {
		return nil
	}
	before := c.workloads.Unwatched()
	if err := c.workloads.Start(ctx); err != nil {
		return err
	}
	if why := c.workloads.Unwatched(); why != "" && before == "" {
		zerolog.Ctx(ctx).Warn().Str("unwatched", why).
			Msg("not watching pods: Ready is judged on the Deployments alone, without ImagePullBackOff, CrashLoopBackOff or Unschedulable; grant the controller list and watch on pods")
	}
	return nil
}

// health judges the workload of a plan that applied its children (nil for
// one that did not, or when Ready means Applied).
func (c *Controller) health(p plan) *workload.Health {
	if c.workloads == nil || p.kind != planApply || p.objs.Deployment == nil {
		return nil
	}
	d := p.objs.Deployment
	h := c.workloads.Health(d.Namespace, d.Labels[render.LabelName], d.Annotations[render.AnnotationContentHash])
	return &h
}
