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
	"golang.org/x/time/rate"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/util/workqueue"

	"github.com/tinyctl/tinyctl/render"
)

// Config tunes a Controller. Zero fields take the documented defaults.
type Config struct {
	// Cluster is what render needs about this cluster; Cluster.Name is the
	// cluster's name in status keys and placement.
	Cluster render.Cluster
	// ClusterLabels are matched by placement.clusterSelector.
	ClusterLabels map[string]string
	// Workers is the number of keys reconciled at once (default 4).
	Workers int
	// Namespaces, when not empty, are the only target namespaces allowed;
	// a component elsewhere stalls with reason NamespaceNotAllowed.
	Namespaces []string
	// CreateNamespaces lets the controller create a missing target
	// namespace; otherwise the component waits with NamespaceMissing.
	CreateNamespaces bool
	// Recheck is how often waiting components, streams deleted out of band
	// and orphans are checked (default 30s).
	Recheck time.Duration
	// RetryBase and RetryMax bound the exponential backoff of transient
	// failures (defaults 10ms and 5m).
	RetryBase, RetryMax time.Duration
	// Coalesce is how long a changed key waits for its changes to stop
	// before it is reconciled (default 50ms), and CoalesceMax the longest
	// it waits while they keep coming (default 1s). Drift events and the
	// initial values are not held back.
	Coalesce, CoalesceMax time.Duration
	// ShutdownGrace is how long in-flight reconciles may run on after Run's
	// context is cancelled before their context is cancelled too
	// (default 10s).
	ShutdownGrace time.Duration
}

func (c Config) withDefaults() Config {
	c.Cluster = c.Cluster.WithDefaults()
	if c.Workers <= 0 {
		c.Workers = 4
	}
	if c.Recheck <= 0 {
		c.Recheck = 30 * time.Second
	}
	if c.RetryBase <= 0 {
		c.RetryBase = 10 * time.Millisecond
	}
	if c.RetryMax <= 0 {
		c.RetryMax = 5 * time.Minute
	}
	if c.Coalesce <= 0 {
		c.Coalesce = 50 * time.Millisecond
	}
	if c.CoalesceMax <= 0 {
		c.CoalesceMax = time.Second
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 10 * time.Second
	}
	return c
}

// Deps are the controller's connections to the outside world.
type Deps struct {
	Specs   Specs
	Streams Streams
	// StreamNames lists streams for the out-of-band delete check.
	StreamNames StreamLister
	Statuses    Statuses
	Applier     Applier
	// Kube, Metadata and Discovery reach the API server for namespaces,
	// the children informers and CRD detection.
	Kube      kubernetes.Interface
	Metadata  metadata.Interface
	Discovery discovery.DiscoveryInterface
	// Observer receives metrics-worthy events; nil discards them.
	Observer Observer
}

// Controller reconciles the spec bucket into one cluster.
type Controller struct {
	cfg      Config
	deps     Deps
	obs      Observer
	specs    *specCache
	coalesce *coalescer
	queue    workqueue.TypedRateLimitingInterface[string]
	children *children
	status   *statusCache

	orphansLogged sync.Map
	namespaces    sync.Map      // target namespaces known to exist
	bucketCreated atomic.Value  // time.Time of the spec bucket's incarnation
	recreated     chan struct{} // signals that the spec bucket was recreated
	initialDone   atomic.Bool
	pending       sync.Map // keys of the initial values not yet reconciled once
	ready         atomic.Bool
}

// New returns a Controller; Run starts it.
func New(cfg Config, deps Deps) *Controller {
	cfg = cfg.withDefaults()
	c := &Controller{cfg: cfg, deps: deps, obs: deps.Observer, specs: newSpecCache(), status: newStatusCache(),
		recreated: make(chan struct{}, 1), coalesce: newCoalescer(cfg.Coalesce, cfg.CoalesceMax, time.Now)}
	if c.obs == nil {
		c.obs = nopObserver{}
	}
	limiter := workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](cfg.RetryBase, cfg.RetryMax),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(50), 300)},
	)
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "tinyctl"})
	c.children = newChildren(deps.Metadata, deps.Discovery, cfg.Namespaces, c.enqueue)
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

// Run reconciles until ctx is cancelled, then stops taking work. When the
// cancellation's cause is ErrDrain, in-flight reconciles may finish for up
// to Config.ShutdownGrace; otherwise they are cancelled at once. It returns
// an error only when it cannot start: the status records cannot be read,
// the informers do not sync, or the first watch cannot be created.
func (c *Controller) Run(ctx context.Context) error {
	log := zerolog.Ctx(ctx).With().Str(LogCluster, c.cfg.Cluster.Name).Logger()
	ctx = log.WithContext(ctx)
	defer c.queue.ShutDown()
	if err := c.loadStatuses(ctx); err != nil {
		return err
	}
	if err := c.children.startAvailable(ctx); err != nil {
		return err
	}
	info, err := c.deps.Specs.Info(ctx)
	if err != nil {
		return fmt.Errorf("read spec bucket: %w", err)
	}
	c.bucketCreated.Store(info.Created)
	w, err := c.openWatch(ctx)
	if err != nil {
		return err
	}

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
	case <-time.After(c.cfg.ShutdownGrace):
		log.Warn().Dur("grace", c.cfg.ShutdownGrace).Msg("cancelling in-flight reconciles")
		cancelWork()
		<-done
	}
	return nil
}

// Keys returns every key whose latest entry is a put, sorted.
func (c *Controller) Keys() []string {
	keys := c.specs.liveKeys()
	slices.Sort(keys)
	return keys
}

func (c *Controller) enqueue(key string) { c.queue.Add(key) }
