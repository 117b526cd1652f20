package reconcile

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/api"
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

// syncFor reconciles key at revision rev: in full when something asked
// for it since the last reconcile (enqueue) or rev has not settled (a new
// revision, a failed attempt), else only its health is judged again. A
// key is queued without a reason by its workload's informer, by a
// scheduled credentials rotation (syncHealth finds it due), and after a
// reconcile that took the reason of a wake whose queue.Add came while it
// ran: each wake marks the key before it queues it, so a reconcile that
// starts in between does the work, and the queued run finds nothing
// asked. Taking such a run for a full reconcile cost a stream lookup and
// a render for nothing (TestTheLoopIsNotWokenByItsOwnWrites counted 4
// for 3 on loaded machines).
func (c *Controller) syncFor(ctx context.Context, key string, rev uint64) error {
	if c.wantsFull(key, rev) {
		return c.sync(ctx, key)
	}
	return c.syncHealth(ctx, key, rev)
}

// wantsFull takes key's reason to be queued and says whether revision
// rev needs a full reconcile (see syncFor).
func (c *Controller) wantsFull(key string, rev uint64) bool {
	asked := c.needsFull.take(key)
	_, settled := c.settled.at(key, rev)
	return asked || !settled
}

// keepRotation sets key's credentials-rotation timer again from prev's
// children. The timer is one delayed entry of the queue, which keeps only
// the earliest per key: a retry queued before it takes its place, and
// when that run is a health check, nothing else would set it again and
// the credentials would expire.
func (c *Controller) keepRotation(key string, prev api.Status) {
	for _, k := range prev.Children {
		c.scheduleRotation(key, k.Expires)
	}
}

// syncHealth records what the workload now says of key, whose revision
// rev was applied: the status is its last one with the conditions judged
// again. Nothing is read from NATS or written to Kubernetes; a status
// that is not an applied one at rev, or whose credentials are due to be
// minted again, gets a full reconcile instead.
func (c *Controller) syncHealth(ctx context.Context, key string, rev uint64) error {
	prev, ok := c.status.get(key)
	dep, hasDep := prev.ChildOfKind("Deployment")
	ns, name, err := api.ParseKey(key)
	if !ok || !hasDep || err != nil || c.workloads == nil || prev.ObservedRevision != rev ||
		prev.Error != "" || !prev.IsTrue(api.ConditionApplied) || c.rotationDue(prev) {
		return c.sync(ctx, key)
	}
	c.keepRotation(key, prev)
	h := c.workloads.Health(ns, name, dep.Hash)
	st := prev
	st.Conditions = conditions(nil, &h)
	return c.writeStatus(ctx, st)
}
