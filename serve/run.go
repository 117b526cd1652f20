package serve

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// process is one running controller process.
type process struct {
	cfg      Config
	conn     *bus.Conn
	specs    *specs.Store
	statuses *status.Store
	leases   *lease.Store
	streams  *streams.Manager
	kube     *rest.Config
	metrics  *metrics

	loop      atomic.Pointer[reconcile.Controller]
	leader    atomic.Bool
	connected atomic.Bool
}

// Run runs the controller process until ctx is cancelled (SIGTERM), then
// shuts down gracefully: it stops taking work, lets in-flight reconciles
// finish within ShutdownGrace, and releases the lease so a standby takes
// over at once. It returns an error when it cannot start (NATS or the API
// server unreachable, bad configuration).
func Run(ctx context.Context, cfg Config) error {
	cfg = cfg.withDefaults()
	log := zerolog.Ctx(ctx).With().Str(reconcile.LogCluster, cfg.Cluster.Name).Str("holder", cfg.Holder).Logger()
	ctx = log.WithContext(ctx)
	p := &process{cfg: cfg}
	p.metrics = newMetrics(p.loopView, p.latestRevision)
	var err error
	if p.kube, err = kubeConfig(cfg.Kubeconfig, cfg.KubeContext, cfg.Holder); err != nil {
		return err
	}
	servers, err := p.serveHTTP(ctx) // alive (and not ready) while connecting
	if err != nil {
		return err
	}
	defer servers.close()
	stop, err := p.connect(ctx)
	if err != nil {
		return err
	}
	defer stop()
	go p.heartbeat(ctx)
	log.Info().Str("nats", p.conn.NATS().ConnectedUrlRedacted()).Str("kube", p.kube.Host).Msg("controller started; campaigning for the lease")
	return p.campaign(ctx)
}

// connect starts the embedded server when configured, connects, and opens
// the buckets; stop undoes it.
func (p *process) connect(ctx context.Context) (stop func(), err error) {
	log := zerolog.Ctx(ctx)
	natsCfg := p.cfg.NATS
	var embedded *bus.Embedded
	if p.cfg.Embedded != nil {
		if embedded, err = bus.StartEmbedded(ctx, *p.cfg.Embedded); err != nil {
			return nil, err
		}
		natsCfg.URLs = []string{embedded.ClientURL()}
		natsCfg.Token = p.cfg.Embedded.Token
		log.Info().Str("url", embedded.ClientURL()).Msg("embedded NATS server started")
	}
	if natsCfg.Name == "" {
		natsCfg.Name = "tinyctl-serve/" + p.cfg.Holder
	}
	p.conn, err = bus.Connect(ctx, natsCfg, func(sc bus.StateChange) {
		up := sc.State == bus.StateConnected || sc.State == bus.StateReconnected
		p.connected.Store(up)
		boolGauge(p.metrics.connected, up)
		log.Info().Stringer("state", sc.State).Msg("nats connection")
	})
	if err != nil {
		if embedded != nil {
			_ = embedded.Shutdown(context.WithoutCancel(ctx))
		}
		return nil, fmt.Errorf("connect to NATS: %w", err)
	}
	p.connected.Store(true)
	boolGauge(p.metrics.connected, true)
	stop = func() {
		p.conn.Close()
		if embedded != nil {
			_ = embedded.Shutdown(context.WithoutCancel(ctx))
		}
	}
	if err := p.openStores(ctx); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

func (p *process) openStores(ctx context.Context) error {
	var err error
	specCfg := specs.Config{}
	if p.cfg.SpecBucket != "" {
		specCfg.Bucket = p.cfg.SpecBucket
	}
	if p.specs, err = specs.Open(ctx, p.conn, specCfg, kv.Ensure); err != nil {
		return fmt.Errorf("open spec bucket: %w", err)
	}
	if p.statuses, err = status.Open(ctx, p.conn, status.Config{Bucket: p.cfg.StatusBucket}, kv.Ensure); err != nil {
		return fmt.Errorf("open status bucket: %w", err)
	}
	if p.leases, err = lease.Open(ctx, p.conn, lease.Config{}); err != nil {
		return fmt.Errorf("open lease bucket: %w", err)
	}
	p.streams = streams.New(p.conn, 0)
	return nil
}

// campaign wins the lease, leads until the lease is lost or ctx ends, and
// campaigns again after a loss.
func (p *process) campaign(ctx context.Context) error {
	log := zerolog.Ctx(ctx)
	for {
		l, err := p.leases.Campaign(ctx, p.cfg.leaseName(), p.cfg.Holder, lease.Options{
			TTL:          p.cfg.LeaseTTL,
			OnRenewError: func(err error) { log.Warn().Err(err).Msg("lease renewal failed; retrying") },
		})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("campaign for lease %s: %w", p.cfg.leaseName(), err)
		}
		log.Info().Str("lease", p.cfg.leaseName()).Msg("lease acquired; reconciling")
		err = p.lead(ctx, l)
		if ctx.Err() != nil {
			p.release(l)
			return err
		}
		if l.Err() != nil {
			log.Warn().Err(l.Err()).Msg("lease lost; stopped writing, campaigning again")
			continue
		}
		// The loop stopped by itself (it could not start): let another
		// replica try, and try again after a pause.
		log.Error().Err(err).Msg("reconcile loop stopped; releasing the lease")
		p.release(l)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(p.cfg.LeaseTTL / 3):
		}
	}
}

// lead runs the reconcile loop while lease is held. A lost lease stops it
// at once (in-flight reconciles are cancelled and every write is fenced);
// ctx ending stops it gracefully.
func (p *process) lead(ctx context.Context, l *lease.Lease) error {
	loopCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	go func() {
		select {
		case <-l.Lost():
			cancel(lease.ErrLost)
		case <-ctx.Done():
			cancel(reconcile.ErrDrain)
		case <-loopCtx.Done():
		}
	}()
	ctrl, err := p.controller(l)
	if err != nil {
		return err
	}
	p.loop.Store(ctrl)
	p.leader.Store(true)
	boolGauge(p.metrics.leader, true)
	defer func() {
		p.leader.Store(false)
		boolGauge(p.metrics.leader, false)
	}()
	return ctrl.Run(loopCtx)
}

func (p *process) release(l *lease.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Release(ctx); err != nil && !errors.Is(err, lease.ErrLost) {
		zerolog.Ctx(ctx).Warn().Err(err).Msg("release lease")
	}
}

// controller builds a reconcile loop whose writes are fenced by lease.
func (p *process) controller(l *lease.Lease) (*reconcile.Controller, error) {
	applier, err := apply.New(p.kube, render.AnnotationContentHash)
	if err != nil {
		return nil, err
	}
	f := fence{l.Fence()}
	deps := reconcile.Deps{
		Specs:       p.specs,
		Streams:     fencedStreams{f, p.streams},
		StreamNames: p.streams.Names,
		Statuses:    fencedStatuses{f, p.statuses},
		Applier:     fencedApplier{f, applier},
		Observer:    p.metrics,
	}
	if deps.Kube, err = kubernetes.NewForConfig(p.kube); err != nil {
		return nil, err
	}
	if deps.Metadata, err = metadata.NewForConfig(p.kube); err != nil {
		return nil, err
	}
	if deps.Discovery, err = discovery.NewDiscoveryClientForConfig(p.kube); err != nil {
		return nil, err
	}
	return reconcile.New(reconcile.Config{
		Cluster:          p.cfg.Cluster,
		ClusterLabels:    p.cfg.ClusterLabels,
		Workers:          p.cfg.Workers,
		Namespaces:       p.cfg.Namespaces,
		CreateNamespaces: p.cfg.CreateNamespaces,
		Recheck:          p.cfg.Recheck,
		ShutdownGrace:    p.cfg.ShutdownGrace,
	}, deps), nil
}

// heartbeat keeps this cluster's heartbeat alive while the process runs,
// leader or standby, so status readers can tell live clusters from gone
// ones.
func (p *process) heartbeat(ctx context.Context) {
	err := p.statuses.RunHeartbeat(ctx, status.HeartbeatOptions{
		Heartbeat: status.Heartbeat{Cluster: p.cfg.Cluster.Name, Labels: p.cfg.ClusterLabels,
			Controller: p.cfg.Holder, Settings: &p.cfg.Cluster},
		Interval: p.cfg.HeartbeatTTL / 3, TTL: p.cfg.HeartbeatTTL,
		OnError: func(err error) { zerolog.Ctx(ctx).Warn().Err(err).Msg("heartbeat failed") },
	})
	if err != nil && ctx.Err() == nil {
		zerolog.Ctx(ctx).Error().Err(err).Msg("heartbeat stopped")
	}
}

func (p *process) loopView() loopView {
	if c := p.loop.Load(); c != nil {
		return c
	}
	return nil
}

// latestRevision is the spec bucket's last revision, for the watch-lag
// gauge; 0 when it cannot be read.
func (p *process) latestRevision() uint64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := p.specs.Info(ctx) // only called once a loop exists, so specs is set
	if err != nil {
		return 0
	}
	return info.LastRevision
}
