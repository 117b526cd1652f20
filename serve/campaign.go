package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus/events"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
	"github.com/tinyctl/tinyctl/serve/wire"
)

// campaign wins the lease, leads until the lease is lost or ctx ends, and
// campaigns again after a loss. The lease is renewed on a context of its
// own, so that a SIGTERM (ctx ending) lets the drain write while it still
// holds the lease; the lease is released after the drain.
func (p *Process) campaign(ctx context.Context) error {
	log := zerolog.Ctx(ctx)
	for {
		// The campaign stops with ctx; once won, renewals go on until the
		// lease is released.
		renewCtx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
		unhook := context.AfterFunc(ctx, stopRenewing)
		l, err := p.leases.Campaign(renewCtx, p.cfg.leaseName(), p.cfg.Holder, lease.Options{
			TTL:          p.cfg.LeaseTTL,
			OnRenewError: func(err error) { log.Warn().Err(err).Msg("lease renewal failed; retrying") },
		})
		if !unhook() { // ctx ended while campaigning
			if err == nil {
				p.release(ctx, l)
			}
			stopRenewing()
			return nil
		}
		if err != nil {
			stopRenewing()
			return fmt.Errorf("campaign for lease %s: %w", p.cfg.leaseName(), err)
		}
		p.metrics.acquired.Inc()
		log.Info().Str("lease", p.cfg.leaseName()).Msg("lease acquired; reconciling")
		err = p.lead(ctx, l)
		switch {
		case ctx.Err() != nil:
			p.release(ctx, l)
			stopRenewing()
			return err
		case l.Err() != nil:
			stopRenewing()
			log.Warn().Err(l.Err()).Msg("lease lost; stopped writing, campaigning again")
			continue
		}
		// The loop stopped by itself (it could not start): let another
		// replica try, and try again after a pause.
		log.Error().Err(err).Msg("reconcile loop stopped; releasing the lease")
		p.release(ctx, l)
		stopRenewing()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(p.cfg.LeaseTTL / 3):
		}
	}
}

// lead runs the reconcile loop while lease l is held. A lost lease stops
// it at once (in-flight reconciles are cancelled and every write is
// fenced); ctx ending stops it gracefully.
func (p *Process) lead(ctx context.Context, l *lease.Lease) error {
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
	go p.keepEventsStream(loopCtx)
	sink := eventSink{nats: events.NewPublisher(p.conn), metrics: p.metrics}
	if p.cfg.KubernetesEvents {
		rec, stop, err := kubeEvents(p.kube, l.Fence())
		if err != nil {
			return err
		}
		defer stop()
		sink.kube = rec
	}
	ctrl, err := p.controller(l, sink)
	if err != nil {
		return err
	}
	if p.tenants != nil {
		go p.keepAccounts(loopCtx, l)
	}
	stopDeadLetters, err := p.serveDeadLetters(loopCtx, ctrl)
	if err != nil {
		return err
	}
	defer stopDeadLetters()
	stopQueueFigures, err := p.serveQueueFigures(loopCtx)
	if err != nil {
		return err
	}
	defer stopQueueFigures()
	p.loop.Store(ctrl)
	p.leader.Store(true)
	boolGauge(p.metrics.leader, true)
	defer func() {
		p.leader.Store(false)
		boolGauge(p.metrics.leader, false)
	}()
	return ctrl.Run(loopCtx)
}

// release gives the lease up so a standby can take it at once, logging to
// ctx's logger what goes wrong.
func (p *Process) release(ctx context.Context, l *lease.Lease) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := l.Release(rctx); err != nil && !errors.Is(err, lease.ErrLost) {
		zerolog.Ctx(ctx).Warn().Err(err).Msg("release lease")
	}
}

// controller builds a reconcile loop whose writes are fenced by lease l
// and whose events go to sink.
func (p *Process) controller(l *lease.Lease, sink reconcile.Events) (*reconcile.Controller, error) {
	m, err := apply.New(p.kube, render.AnnotationContentHash)
	if err != nil {
		return nil, err
	}
	deps, err := wire.Deps(p.specs, p.statuses, p.streams, m, p.kube, nil)
	if err != nil {
		return nil, err
	}
	deps.Fence, deps.Observer, deps.Events = l.Fence(), p.metrics, sink
	if p.signer != nil {
		deps.Minter = p.signer
	}
	if p.tenants != nil {
		deps.Tenants = tenantsPort{p.tenants}
		deps.Streams = wire.StreamsPerNamespace(p.nsStreams.manager)
	}
	return reconcile.New(p.cfg.Loop, deps), nil
}
