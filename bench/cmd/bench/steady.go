package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/tinyctl/tinyctl/api"
)

// steadyResult is what a converged controller costs, at N components.
type steadyResult struct {
	N      int    `json:"n"`
	System string `json:"system"` // "serve" or a baseline variant
	// Idle: CPU used over IdleFor after convergence, RSS at its end,
	// reconciles during it.
	IdleFor        time.Duration `json:"idleFor"`
	IdleCPU        time.Duration `json:"idleCPU"`
	IdleRSS        int64         `json:"idleRSS"`
	IdleReconciles float64       `json:"idleReconciles"`
	// NoOp: writes per re-put of an unchanged spec (the average over
	// NoOpPuts puts to different keys).
	NoOpPuts int        `json:"noOpPuts"`
	NoOp     writeCount `json:"noOp"`
	// Unrelated: one component's spec changed; the writes the change
	// caused, and how many of those touched another component's objects.
	Unrelated writeCount `json:"unrelated"`
	// Burst: BurstPuts changed specs put to one key as fast as one
	// publisher can; what the controller did about them.
	BurstPuts       int        `json:"burstPuts"`
	BurstReconciles float64    `json:"burstReconciles"`
	Burst           writeCount `json:"burst"`
	// Latency from a put to its status Ready (every child applied), one
	// changed spec every Interval for LatencyFor.
	Interval   time.Duration   `json:"interval"`
	LatencyFor time.Duration   `json:"latencyFor"`
	Latencies  []time.Duration `json:"latencies"`
	Puts       int             `json:"puts"`
	P50        time.Duration   `json:"p50"`
	P99        time.Duration   `json:"p99"`
	Max        time.Duration   `json:"max,omitempty"`
	// Resync: the controller's own periodic pass over every key (serve's
	// full recheck; the baseline's informer resyncs), from its first
	// reconcile until quiet after the pass's window (1.1 periods after
	// start): time, CPU, reconciles, writes.
	ResyncTime       time.Duration `json:"resyncTime"`
	ResyncCPU        time.Duration `json:"resyncCPU"`
	ResyncReconciles float64       `json:"resyncReconciles"`
	ResyncWrites     writeCount    `json:"resyncWrites"`
	ResyncMissing    bool          `json:"resyncMissing,omitempty"` // none came within -resync-within
	ResyncMeasured   bool          `json:"resyncMeasured,omitempty"`
	// ResyncFirstTime is serve's first full recheck after its start, which
	// renders every spec once (the second is the one measured above).
	ResyncFirstTime time.Duration `json:"resyncFirstTime,omitempty"`
	// Restart with nothing changed: process start to ready (serve's
	// /readyz as leader; the baseline has no such signal: its queue empty
	// and quiet), and the writes made by then.
	RestartReady  time.Duration `json:"restartReady"`
	RestartWrites writeCount    `json:"restartWrites"`
	// Restart to a new put reconciled: process start, a changed spec put
	// at once, until its status is Ready.
	RestartToNewPut time.Duration `json:"restartToNewPut"`
}

// target is a controller under steady-state measurement: how the driver
// publishes a spec to it, sees it Ready, tells its writes apart, and
// starts it again.
type target struct {
	system string
	put    func(ctx context.Context, c api.Component) (key string, rev uint64, err error)
	ready  readiness
	agent  string // the user-agent prefix of its requests in the audit log
	// start starts the controller again (its log named after what for).
	start func(what string) (*proc, error)
	// isReady reports whether a started process says it is ready; nil:
	// the controller has no such signal, and ready means quiet.
	isReady func(p *proc) bool
}

// serveTarget is serve on e: specs put in the KV bucket, status records.
func (b *bench) serveTarget(e *env, t *tracker, n int) target {
	return target{
		system: "serve",
		put: func(ctx context.Context, c api.Component) (string, uint64, error) {
			rev, err := e.put(ctx, c)
			return api.KeyOf(c), rev, err
		},
		ready: t, agent: serveAgent,
		start: func(what string) (*proc, error) {
			return b.startServe(e, filepath.Join(b.out, fmt.Sprintf("serve-%d-%s.log", n, what)))
		},
		isReady: (*proc).ready,
	}
}

// steady runs every steady-state measurement on a converged controller, in
// an order where each leaves the next a quiet controller.
func (b *bench) steady(ctx context.Context, e *env, p *proc, tg target, n int) (r steadyResult, err error) {
	r.N, r.System = n, tg.system
	js, err := e.countJetStreamWrites()
	if err != nil {
		return r, err
	}
	if err := quiet(ctx, p); err != nil {
		return r, err
	}
	// The periodic resync comes first, at its time after process start:
	// the measurements after it then have the controller to themselves
	// until the next one (at least 1.8 periods after start).
	steps := []func() error{
		func() error { return b.measureResync(ctx, e, p, tg, js, &r) },
		func() error { return b.idle(p, &r) },
		func() error { return b.noOp(ctx, e, p, tg, js, &r) },
		func() error { return b.unrelated(ctx, e, p, tg, js, &r) },
		func() error { return b.burst(ctx, e, p, tg, js, &r) },
		func() error { return b.latency(ctx, p, tg, n, &r) },
		func() error { return b.restarts(ctx, e, p, tg, js, &r) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return r, err
		}
	}
	return r, nil
}

// quiet waits until the process's queue is empty and it has finished no
// reconcile for half a second.
func quiet(ctx context.Context, p *proc) error {
	last, since := -1.0, time.Now()
	return poll(ctx, 5*time.Minute, func() error {
		if err := p.alive(); err != nil {
			return permanent{err}
		}
		depth, err := p.depth()
		if err != nil {
			return err
		}
		n, err := p.reconciles()
		if err != nil {
			return err
		}
		if n != last || depth != 0 {
			last, since = n, time.Now()
		}
		if time.Since(since) < 500*time.Millisecond {
			return fmt.Errorf("queue %v, %v reconciles", depth, n)
		}
		return nil
	})
}

// idle measures CPU and RSS over b.idleFor with nothing to do. The window
// is a measurement, not a wait for a condition.
func (b *bench) idle(p *proc, r *steadyResult) error {
	b.logf("%s idle: %s", r.System, b.idleFor)
	u0, err := p.usage()
	if err != nil {
		return err
	}
	n0, err := p.reconciles()
	if err != nil {
		return err
	}
	select {
	case <-time.After(b.idleFor):
	case <-p.exited:
		return p.alive()
	}
	u1, err := p.usage()
	if err != nil {
		return err
	}
	n1, err := p.reconciles()
	r.IdleFor, r.IdleCPU, r.IdleRSS, r.IdleReconciles = b.idleFor, u1.CPU-u0.CPU, u1.RSS, n1-n0
	return err
}

// noOp re-puts the unchanged spec of ten components, one at a time, and
// counts the writes they caused once the controller is quiet again. A
// re-put that changes nothing may not even reach the controller (the API
// server drops an apply that changes nothing), so the driver waits for
// quiet, not for a reconcile.
func (b *bench) noOp(ctx context.Context, e *env, p *proc, tg target, js *jsWrites, r *steadyResult) error {
	const puts = 10
	b.logf("%s no-op re-puts: %d", r.System, puts)
	m, err := e.mark(ctx, js)
	if err != nil {
		return err
	}
	for i := range puts {
		if _, _, err := tg.put(ctx, component(i)); err != nil {
			return err
		}
		if err := quiet(ctx, p); err != nil {
			return err
		}
	}
	c, err := e.since(ctx, m, js, tg.agent, "")
	r.NoOpPuts, r.NoOp = puts, c
	return err
}

// unrelated changes one component and counts what the controller wrote
// for it and for every other component.
func (b *bench) unrelated(ctx context.Context, e *env, p *proc, tg target, js *jsWrites, r *steadyResult) error {
	b.logf("%s: one component changed", r.System)
	m, err := e.mark(ctx, js)
	if err != nil {
		return err
	}
	c := component(3, api.EnvVar{Name: "CHANGED", Value: "1"})
	key, rev, err := tg.put(ctx, c)
	if err != nil {
		return err
	}
	if err := tg.ready.waitAllReady(ctx, map[string]uint64{key: rev}, time.Minute, p.alive); err != nil {
		return err
	}
	if err := quiet(ctx, p); err != nil {
		return err
	}
	r.Unrelated, err = e.since(ctx, m, js, tg.agent, c.Metadata.Name)
	return err
}

// burst puts b.burstPuts changed specs to one key, then waits until the
// last is Ready, and counts reconciles and writes.
func (b *bench) burst(ctx context.Context, e *env, p *proc, tg target, js *jsWrites, r *steadyResult) error {
	b.logf("%s burst: %d puts to one key", r.System, b.burstPuts)
	m, err := e.mark(ctx, js)
	if err != nil {
		return err
	}
	n0, err := p.reconciles()
	if err != nil {
		return err
	}
	var key string
	var last uint64
	for i := range b.burstPuts {
		if key, last, err = tg.put(ctx, component(0, api.EnvVar{Name: "BURST", Value: strconv.Itoa(i)})); err != nil {
			return err
		}
	}
	if err := tg.ready.waitAllReady(ctx, map[string]uint64{key: last}, time.Minute, p.alive); err != nil {
		return err
	}
	if err := quiet(ctx, p); err != nil {
		return err
	}
	n1, err := p.reconciles()
	if err != nil {
		return err
	}
	c, err := e.since(ctx, m, js, tg.agent, "")
	r.BurstPuts, r.BurstReconciles, r.Burst = b.burstPuts, n1-n0, c
	return err
}

// latency puts one changed spec every b.interval for b.latencyFor, each to
// the next component, and measures put → status Ready at that revision.
func (b *bench) latency(ctx context.Context, p *proc, tg target, n int, r *steadyResult) error {
	b.logf("%s latency: one put every %s for %s", r.System, b.interval, b.latencyFor)
	type sent struct {
		key string
		rev uint64
		at  time.Time
	}
	var puts []sent
	tick := time.NewTicker(b.interval)
	defer tick.Stop()
	end := time.Now().Add(b.latencyFor)
	for i := 1; time.Now().Before(end); i++ {
		c := component(1+i%(n-1), api.EnvVar{Name: "UPDATE", Value: strconv.Itoa(i)})
		at := time.Now()
		key, rev, err := tg.put(ctx, c)
		if err != nil {
			return err
		}
		puts = append(puts, sent{key, rev, at})
		<-tick.C
	}
	want := map[string]uint64{}
	for _, s := range puts {
		want[s.key] = max(want[s.key], s.rev)
	}
	if err := tg.ready.waitAllReady(ctx, want, time.Minute, p.alive); err != nil {
		return err
	}
	for _, s := range puts {
		at, _ := tg.ready.readyAt(s.key, s.rev)
		r.Latencies = append(r.Latencies, at.Sub(s.at))
	}
	slices.Sort(r.Latencies)
	r.Puts = len(r.Latencies)
	r.Interval, r.LatencyFor = b.interval, b.latencyFor
	r.P50, r.P99, r.Max = quantile(r.Latencies, 0.50), quantile(r.Latencies, 0.99), r.Latencies[len(r.Latencies)-1]
	return quiet(ctx, p)
}

// quantile of sorted durations, nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// measureResync waits for the controller's own periodic pass over every key
// (nothing else is changing: the first reconcile is its start) and
// measures it until the controller is quiet after the pass's window ends.
// controller-runtime resyncs each informer at its own time, 0.9 to 1.1
// times the period after start (B1 reconciles every Component once per
// child kind); serve's full recheck comes once, at the period. b.resync 0
// skips the measurement.
func (b *bench) measureResync(ctx context.Context, e *env, p *proc, tg target, js *jsWrites, r *steadyResult) error {
	if b.resync == 0 {
		return nil
	}
	if p.counters.fullRechecks != "" {
		return b.measureAudit(ctx, e, p, tg, js, r)
	}
	b.logf("%s: waiting for its periodic resync (%s after start)", r.System, b.resync)
	n0, err := p.reconciles()
	if err != nil {
		return err
	}
	if err := reconciledPast(ctx, p, n0, b.resyncWithin); err != nil {
		if p.alive() != nil || ctx.Err() != nil {
			return fmt.Errorf("%s resync: %w", r.System, err)
		}
		b.logf("%s: no resync within %s: %v", r.System, b.resyncWithin, err)
		r.ResyncMissing = true // the other measurements go on
		return nil
	}
	start := time.Now()
	u0, err := p.usage()
	if err != nil {
		return err
	}
	m, err := e.mark(ctx, js)
	if err != nil {
		return err
	}
	u1, n1, err := b.closeWindow(ctx, p, p.started.Add(b.resync*11/10))
	if err != nil {
		return err
	}
	r.ResyncTime, r.ResyncCPU, r.ResyncReconciles = time.Since(start), u1.CPU-u0.CPU, n1-n0
	r.ResyncMeasured = true
	r.ResyncWrites, err = e.since(ctx, m, js, tg.agent, "")
	return err
}

// closeWindow waits until end (the window is a measurement, not a wait
// for a condition), then until p is quiet, and returns p's usage and
// reconciles by then.
func (b *bench) closeWindow(ctx context.Context, p *proc, end time.Time) (usage, float64, error) {
	if err := b.until(p, end); err != nil {
		return usage{}, 0, err
	}
	if err := quiet(ctx, p); err != nil {
		return usage{}, 0, err
	}
	u, err := p.usage()
	if err != nil {
		return usage{}, 0, err
	}
	n, err := p.reconciles()
	return u, n, err
}

// until waits for t unless p exits.
func (b *bench) until(p *proc, t time.Time) error {
	select {
	case <-time.After(time.Until(t)):
		return nil
	case <-p.exited:
		return p.alive()
	}
}

// restarts stops p and starts the controller twice: once to count what a
// restart with nothing changed writes until ready, once with a changed
// spec put right after the process starts, timed until that put is Ready.
func (b *bench) restarts(ctx context.Context, e *env, p *proc, tg target, js *jsWrites, r *steadyResult) error {
	b.logf("%s: restart with nothing changed", r.System)
	if err := p.stop(); err != nil {
		return err
	}
	m, err := e.mark(ctx, js)
	if err != nil {
		return err
	}
	p2, err := tg.start("restart")
	if err != nil {
		return err
	}
	defer func() { _ = p2.stop() }()
	if tg.isReady != nil {
		err = poll(ctx, b.timeout, func() error {
			if err := p2.alive(); err != nil {
				return permanent{err}
			}
			if !tg.isReady(p2) {
				return fmt.Errorf("not ready")
			}
			return nil
		})
		r.RestartReady = time.Since(p2.started)
	} else {
		err = b.quietAfterStart(ctx, p2)
		r.RestartReady = time.Since(p2.started) - 500*time.Millisecond // quiet's own half second
	}
	if err != nil {
		return err
	}
	if err := quiet(ctx, p2); err != nil {
		return err
	}
	if r.RestartWrites, err = e.since(ctx, m, js, tg.agent, ""); err != nil {
		return err
	}
	b.logf("%s: restart to a new put reconciled", r.System)
	if err := p2.stop(); err != nil {
		return err
	}
	p3, err := tg.start("restart-put")
	if err != nil {
		return err
	}
	defer func() { _ = p3.stop() }()
	key, rev, err := tg.put(ctx, component(2, api.EnvVar{Name: "RESTART", Value: "1"}))
	if err != nil {
		return err
	}
	if err := tg.ready.waitAllReady(ctx, map[string]uint64{key: rev}, b.timeout, p3.alive); err != nil {
		return err
	}
	at, _ := tg.ready.readyAt(key, rev)
	r.RestartToNewPut = at.Sub(p3.started)
	return nil
}

// quietAfterStart waits until a just-started controller has reconciled
// something and gone quiet (its metrics answer only once it runs).
func (b *bench) quietAfterStart(ctx context.Context, p *proc) error {
	if err := reconciledPast(ctx, p, 0, b.timeout); err != nil {
		return err
	}
	return quiet(ctx, p)
}

// reconciledPast waits until p has finished more than n reconciles.
func reconciledPast(ctx context.Context, p *proc, n float64, within time.Duration) error {
	return poll(ctx, within, func() error {
		if err := p.alive(); err != nil {
			return permanent{err}
		}
		if got, err := p.reconciles(); err != nil || got <= n {
			return fmt.Errorf("%v reconciles, waiting for more than %v (%v)", got, n, err)
		}
		return nil
	})
}
