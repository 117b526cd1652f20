package main

import (
	"context"
	"fmt"
	"time"
)

// measureAudit measures a full recheck of serve's, which reconciles only
// what it finds changed, so no reconcile marks its start. The first after
// convergence compares every stream with its spec rendered again (the
// process knows no fingerprints yet); its time is kept apart
// (ResyncFirstTime). The next, a period later, is the one measured: the
// CPU from a tenth of a period before it is due until a tenth of a period
// after (and the controller quiet), its time its own
// (tinyctl_recheck_duration_seconds), and the reconciles and writes
// whatever it caused.
func (b *bench) measureAudit(ctx context.Context, e *env, p *proc, tg target, js *jsWrites, r *steadyResult) error {
	full := []string{`kind="full"`}
	took := func() (float64, error) { return p.metric("tinyctl_recheck_duration_seconds_sum", full...) }
	b.logf("%s: waiting for its first full recheck after convergence (every %s)", r.System, b.resync)
	first, err := b.nextFullRecheck(ctx, p, r)
	if err != nil || r.ResyncMissing {
		return err
	}
	took0, err := took()
	if err != nil {
		return err
	}
	r.ResyncFirstTime = time.Duration((took0 - first.took) * float64(time.Second))
	if err := b.until(p, first.at.Add(b.resync*9/10)); err != nil {
		return err
	}
	n0, err := p.reconciles()
	if err != nil {
		return err
	}
	u0, err := p.usage()
	if err != nil {
		return err
	}
	m, err := e.mark(ctx, js)
	if err != nil {
		return err
	}
	// No polling inside the window: each scrape of /metrics costs serve
	// CPU, which at 50 a second outweighed the recheck itself.
	if err := b.until(p, first.at.Add(b.resync*11/10)); err != nil {
		return err
	}
	if f, err := p.metric(p.counters.fullRechecks, full...); err != nil || f != first.count+1 {
		return fmt.Errorf("%s: %v full rechecks in the window after the one seen at %v, want 1 (%v)", r.System, f-first.count, first.count, err)
	}
	u1, n1, err := b.closeWindow(ctx, p, time.Now())
	if err != nil {
		return err
	}
	took1, err := took()
	if err != nil {
		return err
	}
	r.ResyncTime = time.Duration((took1 - took0) * float64(time.Second))
	r.ResyncCPU, r.ResyncReconciles, r.ResyncMeasured = u1.CPU-u0.CPU, n1-n0, true
	r.ResyncWrites, err = e.since(ctx, m, js, tg.agent, "")
	return err
}

// fullRecheck is when a full recheck was seen to have run, and the sum of
// the full rechecks' durations before it.
type fullRecheck struct {
	at    time.Time
	took  float64
	count float64 // full rechecks so far, this one included
}

// nextFullRecheck waits for p's next full recheck (r.ResyncMissing when
// none comes within -resync-within).
func (b *bench) nextFullRecheck(ctx context.Context, p *proc, r *steadyResult) (fullRecheck, error) {
	full := []string{`kind="full"`}
	f0, err := p.metric(p.counters.fullRechecks, full...)
	if err != nil {
		return fullRecheck{}, err
	}
	before, err := p.metric("tinyctl_recheck_duration_seconds_sum", full...)
	if err != nil {
		return fullRecheck{}, err
	}
	err = poll(ctx, b.resyncWithin, func() error {
		if err := p.alive(); err != nil {
			return permanent{err}
		}
		if f, err := p.metric(p.counters.fullRechecks, full...); err != nil || f <= f0 {
			return fmt.Errorf("%v full rechecks, waiting for more than %v (%v)", f, f0, err)
		}
		return nil
	})
	if err != nil && (p.alive() != nil || ctx.Err() != nil) {
		return fullRecheck{}, fmt.Errorf("%s full recheck: %w", r.System, err)
	}
	r.ResyncMissing = err != nil
	return fullRecheck{at: time.Now(), took: before, count: f0 + 1}, nil
}
