package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/workload"
)

// Controller reconciles the spec bucket into one cluster.
type Controller struct {
	cfg      Config
	deps     Deps
	obs      Observer
	events   Events
	fence    Fence
	clock    clock.WithTicker
	specs    *specCache
	coalesce *coalescer
	queue    workqueue.TypedRateLimitingInterface[string]
	children *children
	status   *statusCache

	// workloads judges whether a Deployment runs what was applied (nil:
	// Ready means Applied).
	workloads *workload.Watcher
	// namespaces are target namespaces known to exist.
	namespaces *keySet
	// pending are the initial values not yet reconciled once; Ready waits
	// for them.
	pending *keySet
	// settled are the keys whose latest reconcile succeeded (audit.go).
	settled *settledSet
	// own are the loop's writes whose informer events are to come.
	own *ownWrites
	// needsFull are the queued keys something asked a full reconcile
	// of; a key queued otherwise (its workload's informer), whose latest
	// revision has settled, has only its health judged again (syncFor).
	needsFull *keySet
	// orphansLogged are orphans already logged once.
	orphansLogged *keySet
	// accepted are the components whose unplace was held when the
	// controller started with Config.AcceptUnplace: the holds it confirms.
	accepted map[string]bool
	// incarnation names the watched spec bucket (Specs.Incarnation).
	incarnation atomic.Pointer[string]
	recreated   chan struct{} // signals that the spec bucket was recreated
	synced      atomic.Bool   // the watch delivered its initial values
	ready       atomic.Bool
}

// New returns a Controller; Run starts it.
func New(cfg Config, deps Deps) *Controller {
	cfg = cfg.WithDefaults()
	c := &Controller{cfg: cfg, deps: deps, obs: deps.Observer, events: deps.Events, fence: deps.Fence, clock: deps.Clock,
		specs: newSpecCache(), status: newStatusCache(), namespaces: newKeySet(), pending: newKeySet(), settled: newSettledSet(), own: newOwnWrites(),
		needsFull:     newKeySet(),
		orphansLogged: newKeySet(), recreated: make(chan struct{}, 1)}
	if c.obs == nil {
		c.obs = nopObserver{}
	}
	if c.events == nil {
		c.events = nopEvents{}
	}
	if c.fence == nil {
		c.fence = noFence{}
	}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	c.coalesce = newCoalescer(cfg.Coalesce, cfg.CoalesceMax, c.clock.Now)
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(retryLimiter(cfg),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "tinyctl", Clock: c.clock})
	c.children = newChildren(deps.Metadata, deps.Discovery, cfg.Namespaces, c.enqueue, c.wakes)
	if deps.Workloads != nil && !cfg.ReadyWhenApplied {
		c.workloads = workload.NewWatcher(deps.Workloads, cfg.Namespaces, c.enqueueHealth)
		c.workloads.KeepMetadata(keptChild)
		c.children.deployments = c.workloads.Deployments
	}
	return c
}

// Ready reports whether the initial values of the bucket have all been
// reconciled once and the children informers are synced.
func (c *Controller) Ready() bool { return c.ready.Load() }

// QueueDepth returns the number of keys waiting to be reconciled.
func (c *Controller) QueueDepth() int { return c.queue.Len() }

// LastRevision returns the highest spec-bucket revision seen by the watch.
func (c *Controller) LastRevision() uint64 { return c.specs.revision() }

// ErrDrain, as the cause of Run's context cancellation
// (context.WithCancelCause), asks for a graceful stop: in-flight reconciles
// may finish for up to Config.ShutdownGrace. Any other cause (a lost lease)
// cancels them at once.
var ErrDrain = errors.New("controller draining")

// bucketName is the spec bucket's incarnation as last read ("" before).
func (c *Controller) bucketName() string {
	if b := c.incarnation.Load(); b != nil {
		return *b
	}
	return ""
}

// Run reconciles until ctx is cancelled, then stops taking work. When the
// cancellation's cause is ErrDrain, in-flight reconciles may finish for up
// to Config.ShutdownGrace; otherwise they are cancelled at once. It returns
// an error only when it cannot start: this cluster's status records cannot
// be read, a required informer does not sync, or the first watch cannot be
// created. It logs to zerolog.Ctx(ctx), which is expected to name the
// cluster (LogCluster) already, as serve's does.
func (c *Controller) Run(ctx context.Context) error {
	defer c.queue.ShutDown()
	t0 := c.clock.Now()
	if err := c.loadStatuses(ctx); err != nil {
		return startErr(ctx, err)
	}
	t1 := c.clock.Now()
	// The workload watcher first: the children cache shares its
	// Deployment informer.
	if err := c.startWorkloads(ctx); err != nil {
		return startErr(ctx, err)
	}
	t2 := c.clock.Now()
	if err := c.children.startAvailable(ctx); err != nil {
		return startErr(ctx, err)
	}
	t3 := c.clock.Now()
	c.catchUp(ctx)
	created, err := c.deps.Specs.Incarnation(ctx)
	if err != nil {
		return startErr(ctx, fmt.Errorf("read spec bucket: %w", err))
	}
	c.incarnation.Store(&created)
	w, err := c.openWatch(ctx)
	if err != nil {
		return startErr(ctx, err)
	}
	zerolog.Ctx(ctx).Info().Dur("statuses_ms", t1.Sub(t0)).Dur("workloads_ms", t2.Sub(t1)).Dur("children_ms", t3.Sub(t2)).
		Dur("watch_ms", c.clock.Since(t3)).Msg("reconcile loop started")

	// In-flight reconciles outlive ctx by up to ShutdownGrace.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	var workers sync.WaitGroup
	for range c.cfg.Workers {
		workers.Go(func() { c.work(workCtx) })
	}
	go c.recheckLoop(ctx)
	c.watchLoop(ctx, w)

	c.queue.ShutDown()
	if !errors.Is(context.Cause(ctx), ErrDrain) {
		cancelWork()
	}
	done := make(chan struct{})
	go func() { workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-c.clock.After(c.cfg.ShutdownGrace):
		zerolog.Ctx(ctx).Warn().Dur("grace", c.cfg.ShutdownGrace).Msg("cancelling in-flight reconciles")
		cancelWork()
		<-done
	}
	return nil
}

// loadStatuses reads this cluster's status records once at start.
func (c *Controller) loadStatuses(ctx context.Context) error {
	recs, err := c.deps.Statuses.Load(ctx, c.cfg.Cluster.Name)
	if err != nil {
		return fmt.Errorf("read status records: %w", err)
	}
	accepted := map[string]bool{}
	for _, st := range recs {
		c.status.set(st.Status, st.Revision)
		if c.cfg.AcceptUnplace && slices.ContainsFunc(st.Conditions, func(cd api.Condition) bool { return cd.Reason == reasons.UnplaceHeld }) {
			accepted[st.Component] = true
		}
	}
	c.accepted = accepted
	if c.cfg.AcceptUnplace {
		zerolog.Ctx(ctx).Warn().Int("held", len(accepted)).Msg("--accept-unplace: the unplaces held when this controller started go ahead; " +
			"holds that arise later are kept (remove the flag)")
	}
	return nil
}

// Keys returns every key whose latest entry is a put, sorted.
func (c *Controller) Keys() []string {
	keys := c.specs.liveKeys()
	slices.Sort(keys)
	return keys
}

// enqueue queues key for a full reconcile.
func (c *Controller) enqueue(key string) {
	c.needsFull.add(key)
	c.queue.Add(key)
}

// enqueueAfter queues key for a full reconcile after d.
func (c *Controller) enqueueAfter(key string, d time.Duration) {
	c.needsFull.add(key)
	c.queue.AddAfter(key, d)
}

// enqueueHealth queues key because what its workload says may have
// changed: when nothing else asks for more, only its Ready condition is
// judged again (syncHealth).
func (c *Controller) enqueueHealth(key string) {
	c.queue.Add(key)
}

// startErr is err from a step of starting, or nil when ctx ended meanwhile:
// a controller stopped while it starts (SIGTERM while its informers sync)
// stops cleanly, like one stopped later.
func startErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
