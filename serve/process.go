package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/bus/tenants"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/reconcile"
)

// Process is one controller process: New prepares it, Run runs it, Ready
// and WaitReady tell whether it serves.
type Process struct {
	cfg       Config
	kube      *rest.Config
	metrics   *metrics
	listeners listeners
	done      chan struct{}

	conn     *bus.Conn
	specs    *specs.Store
	statuses *status.Store
	leases   *lease.Store
	streams  *streams.Manager

	signer *identity.Signer // nil: no per-component identities
	// tenants gives namespaces accounts of their own (nil: one account);
	// nsStreams then manages each namespace's streams in its account.
	tenants   *tenants.Manager
	nsStreams *namespaceStreams

	loop      atomic.Pointer[reconcile.Controller]
	leader    atomic.Bool
	connected atomic.Bool
}

// New checks cfg, loads the Kubernetes client configuration, the signing
// key and the TLS files, and binds the metrics and health addresses (so
// Addrs is known before Run, even for port 0). It fails on configuration
// that cannot work. Run releases what New took; a Process that is never
// run must be Closed.
func New(cfg Config) (*Process, error) {
	cfg = cfg.WithDefaults()
	p := &Process{cfg: cfg, done: make(chan struct{})}
	if err := cfg.Loop.Cluster.Check(); err != nil {
		return nil, fmt.Errorf("render settings: %w", err)
	}
	if err := errors.Join(cfg.checkReplicas(), cfg.checkKubeLimits(), cfg.checkNamespaces()); err != nil {
		return nil, err
	}
	if err := p.loadIdentity(); err != nil {
		return nil, err
	}
	p.metrics = newMetrics(p.loopView, p.latestRevision)
	var err error
	if p.kube, err = kubeConfig(cfg); err != nil {
		return nil, err
	}
	if p.listeners, err = listen(cfg.MetricsAddr, cfg.HealthAddr, cfg.PprofAddr); err != nil {
		return nil, err
	}
	return p, nil
}

// Addrs returns the addresses the metrics and health servers listen on
// ("" when disabled).
func (p *Process) Addrs() (metrics, health string) { return p.listeners.addrs() }

// Close releases what New took when Run is never called.
func (p *Process) Close() { p.listeners.close() }

// Ready reports whether the process serves its role: a leader once its
// loop has reconciled the initial values and synced its informers; a
// standby once NATS is connected.
func (p *Process) Ready() bool {
	if p.leader.Load() {
		c := p.loop.Load()
		return c != nil && c.Ready()
	}
	return p.connected.Load()
}

// Leader reports whether this process holds the cluster's lease.
func (p *Process) Leader() bool { return p.leader.Load() }

// WaitReady returns once the process is Ready as the leader (leader true)
// or in any role, or with an error when Run has returned or ctx ends.
func (p *Process) WaitReady(ctx context.Context, leader bool) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if p.Ready() && (!leader || p.Leader()) {
			return nil
		}
		select {
		case <-p.done:
			return errors.New("controller stopped")
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Run runs the controller process until ctx is cancelled (SIGTERM), then
// shuts down gracefully: it stops taking work, lets in-flight reconciles
// finish within the loop's ShutdownGrace while it still holds (and renews)
// the lease, and then releases the lease so a standby takes over at once.
// It returns an error when it cannot start (NATS or the API server
// unreachable, bad configuration).
func (p *Process) Run(ctx context.Context) error {
	defer close(p.done)
	log := zerolog.Ctx(ctx).With().Str(reconcile.LogCluster, p.cfg.cluster()).Str("holder", p.cfg.Holder).Logger()
	ctx = log.WithContext(ctx)
	srv := p.serveHTTP(ctx) // alive (and not ready) while connecting
	defer srv.close()
	stop, err := p.connect(ctx)
	if err != nil {
		return err
	}
	defer stop()
	go p.heartbeat(ctx)
	go p.watchClusters(ctx)
	log.Info().Str("nats", p.conn.NATS().ConnectedUrlRedacted()).Str("kube", p.kube.Host).Msg("controller started; campaigning for the lease")
	return p.campaign(ctx)
}

// Run is New and Process.Run in one call.
func Run(ctx context.Context, cfg Config) error {
	p, err := New(cfg)
	if err != nil {
		return err
	}
	return p.Run(ctx)
}

// connect starts the embedded server when configured, connects, and opens
// the buckets; stop undoes it.
func (p *Process) connect(ctx context.Context) (stop func(), err error) {
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
	// The connection names the process (the CLI's default name is
	// "tinyctl"): nats-server's connz and logs then say which controller
	// a connection is.
	natsCfg.Name = "tinyctl-serve/" + p.cfg.Holder
	// Nothing is buffered while disconnected: a request made then fails at
	// once instead of waiting in the client and being sent on reconnect,
	// when the caller (a fenced write whose lease may be gone) has long
	// given up. Data not yet flushed when the connection drops is
	// discarded by the client, never resent.
	natsCfg.ReconnectBufSize = -1
	if p.signer != nil {
		name := identity.Name("controller", p.cfg.cluster(), p.cfg.Holder)
		natsCfg.Options = append(natsCfg.Options, p.signer.UserOption(name, identity.Controller(p.buckets(), p.cfg.HubDomain), controllerCredsTTL))
	}
	p.conn, err = bus.Connect(ctx, natsCfg, func(sc bus.StateChange) {
		up := sc.State == bus.StateConnected || sc.State == bus.StateReconnected
		p.connected.Store(up)
		boolGauge(p.metrics.connected, up)
		log.Info().Stringer("state", sc.State).Msg("nats connection")
	})
	shutdown := func() {
		if embedded != nil {
			_ = embedded.Shutdown(context.WithoutCancel(ctx))
		}
	}
	if err != nil {
		shutdown()
		return nil, fmt.Errorf("connect to NATS: %w", err)
	}
	p.connected.Store(true)
	boolGauge(p.metrics.connected, true)
	stop = func() { p.conn.Close(); shutdown() }
	if err := p.openStoresPatiently(ctx); err != nil {
		stop()
		return nil, err
	}
	if id := p.cfg.Identity; id != nil && id.Tenants != nil {
		m, closeClaims, err := p.openTenants(ctx, id.Tenants)
		if err != nil {
			stop()
			return nil, fmt.Errorf("namespace accounts: %w", err)
		}
		p.tenants = m
		prev := stop
		stop = func() { closeClaims(); prev() }
	}
	return stop, nil
}

// openStoresPatiently opens the buckets, trying again (every 0.5 s, then
// up to every 5 s) while NATS answers with a transient error: a JetStream
// cluster still electing its leader, a server restarting. A controller
// started together with its broker waits for it, not ready, instead of
// exiting. Other errors (permissions, a bucket with other settings, a
// broker or account without JetStream) end it at once.
func (p *Process) openStoresPatiently(ctx context.Context) error {
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Cap: 5 * time.Second, Steps: math.MaxInt32}
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		last = p.openStores(ctx)
		if last != nil && bus.IsTransient(last) && !errors.Is(last, jetstream.ErrJetStreamNotEnabled) &&
			!errors.Is(last, jetstream.ErrJetStreamNotEnabledForAccount) {
			zerolog.Ctx(ctx).Warn().Err(last).Msg("buckets not reachable yet; trying again")
			return false, nil
		}
		return true, last
	})
	if last != nil && ctx.Err() != nil {
		return last
	}
	return err
}

func (p *Process) openStores(ctx context.Context) error {
	var err error
	if p.specs, err = specs.Open(ctx, p.conn, specs.Config{Bucket: p.cfg.SpecBucket, HubDomain: p.cfg.HubDomain, Replicas: p.cfg.Replicas}, kv.Ensure); err != nil {
		return fmt.Errorf("open spec bucket: %w", err)
	}
	if p.statuses, err = status.Open(ctx, p.conn, status.Config{Bucket: p.cfg.StatusBucket, Replicas: p.cfg.Replicas}, kv.Ensure); err != nil {
		return fmt.Errorf("open status bucket: %w", err)
	}
	if p.leases, err = lease.Open(ctx, p.conn, lease.Config{Replicas: p.cfg.Replicas}); err != nil {
		return fmt.Errorf("open lease bucket: %w", err)
	}
	p.streams = streams.New(p.conn, 0)
	p.nsStreams = &namespaceStreams{conn: p.conn, of: map[string]*streams.Manager{}}
	return nil
}

// heartbeat keeps this cluster's heartbeat alive while the process runs,
// leader or standby, so status readers can tell live clusters from gone
// ones. It carries the cluster's labels and render settings.
func (p *Process) heartbeat(ctx context.Context) {
	settings, tenancy := cluster.Settings(p.cfg.Loop.Cluster), p.cfg.Loop.Tenancy
	opts := status.HeartbeatOptions{
		Heartbeat: cluster.Heartbeat{Cluster: p.cfg.cluster(), Labels: p.cfg.Loop.ClusterLabels,
			Controller: p.cfg.Holder, Settings: &settings, Tenancy: &tenancy, ClusterID: clusterID(p.kube)},
		Interval: p.cfg.HeartbeatTTL / 3, TTL: p.cfg.HeartbeatTTL,
		OnError: func(err error) { zerolog.Ctx(ctx).Warn().Err(err).Msg("heartbeat failed") },
	}
	watchdog := newServerWatchdog(p.conn.NATS(), p.cfg.LeaseTTL)
	opts.OnBeat = func(err error) { watchdog.beat(ctx, err) }
	conflicts := &nameConflicts{statuses: p.statuses, metrics: p.metrics}
	if hub := p.cfg.HubDomain; hub != "" {
		conflicts.hub = func(ctx context.Context, own cluster.Heartbeat) (string, error) {
			return status.HubNameConflict(ctx, p.conn, status.DefaultHeartbeatBucket, hub, own)
		}
	}
	var probe *kedaProbe
	if cs, err := kubernetes.NewForConfig(p.kube); err == nil {
		probe = &kedaProbe{kube: cs, selector: p.cfg.KEDAOperatorSelector}
	}
	opts.Refresh = func(ctx context.Context, hb *cluster.Heartbeat) {
		rctx, cancel := context.WithTimeout(ctx, opts.Interval/2)
		defer cancel()
		if probe != nil {
			probe.refresh(rctx, hb)
		}
		p.reportAccounts(hb)
		hb.Conflict = conflicts.current()
	}
	go conflicts.run(ctx, opts.Heartbeat, opts.Interval)
	err := p.statuses.RunHeartbeat(ctx, opts)
	if err != nil && ctx.Err() == nil {
		zerolog.Ctx(ctx).Error().Err(err).Msg("heartbeat stopped")
	}
}

// reportAccounts puts into the heartbeat's settings the account holding
// each namespace's streams, for readers that render as this cluster does
// (tinyctl diff --cluster).
func (p *Process) reportAccounts(hb *cluster.Heartbeat) {
	if p.tenants == nil || hb.Settings == nil {
		return
	}
	accounts := map[string]string{}
	for _, ns := range p.tenants.Namespaces() {
		accounts[ns] = p.tenants.Namespace(ns).JobsAccount()
	}
	hb.Settings.NATS.Accounts = accounts
}

func (p *Process) loopView() loopView {
	if c := p.loop.Load(); c != nil {
		return c
	}
	return nil
}

// latestRevision is the spec bucket's last revision, for the watch-lag
// gauge; 0 when it cannot be read.
func (p *Process) latestRevision() uint64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := p.specs.Info(ctx) // only called once a loop exists, so specs is set
	if err != nil {
		return 0
	}
	return info.LastRevision
}
