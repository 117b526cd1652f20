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

// steadyResult is what serve costs once converged, at N components.
type steadyResult struct {
	N int `json:"n"`
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
	// Burst: BurstPuts changed specs put to one key as fast as one
	// publisher can; what the controller did about them.
	BurstPuts       int        `json:"burstPuts"`
	BurstReconciles float64    `json:"burstReconciles"`
	Burst           writeCount `json:"burst"`
	// Latency from a put to its status Ready (every child applied), one
	// changed spec every Interval for LatencyFor.
	Interval   time.Duration   `json:"interval"`
	LatencyFor time.Duration   `json:"latencyFor"`
	Latencies  []time.Duration `json:"-"`
	Puts       int             `json:"puts"`
	P50        time.Duration   `json:"p50"`
	P99        time.Duration   `json:"p99"`
	Max        time.Duration   `json:"max,omitempty"`
	// Restart with nothing changed: process start to /readyz, and the
	// writes made by then.
	RestartReady  time.Duration `json:"restartReady"`
	RestartWrites writeCount    `json:"restartWrites"`
	// Restart to a new put reconciled: process start, a changed spec put
	// at once, until its status is Ready.
	RestartToNewPut time.Duration `json:"restartToNewPut"`
}

// steady runs every steady-state measurement on a converged env, in an
// order where each leaves the next a quiet controller.
func (b *bench) steady(ctx context.Context, e *env, p *proc, t *tracker, n int) (r steadyResult, err error) {
	r.N = n
	js, err := e.countJetStreamWrites()
	if err != nil {
		return r, err
	}
	if err := quiet(ctx, p); err != nil {
		return r, err
	}
	if err := b.idle(p, &r); err != nil {
		return r, err
	}
	if err := b.noOp(ctx, e, p, js, &r); err != nil {
		return r, err
	}
	if err := b.burst(ctx, e, p, t, js, &r); err != nil {
		return r, err
	}
	if err := b.latency(ctx, e, p, t, n, &r); err != nil {
		return r, err
	}
	return r, b.restarts(ctx, e, p, t, js, n, &r)
}

// quiet waits until serve's queue is empty and it has finished no
// reconcile for half a second.
func quiet(ctx context.Context, p *proc) error {
	last, since := -1.0, time.Now()
	return poll(ctx, 5*time.Minute, func() error {
		if err := p.alive(); err != nil {
			return permanent{err}
		}
		depth, err := p.metric("tinyctl_queue_depth")
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
	b.logf("idle: %s", b.idleFor)
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
// counts the writes each caused once its reconcile has finished.
func (b *bench) noOp(ctx context.Context, e *env, p *proc, js *jsWrites, r *steadyResult) error {
	const puts = 10
	b.logf("no-op re-puts: %d", puts)
	m, err := e.mark(ctx, js)
	if err != nil {
		return err
	}
	for i := range puts {
		n0, err := p.reconciles()
		if err != nil {
			return err
		}
		if _, err := e.put(ctx, component(i)); err != nil {
			return err
		}
		if err := poll(ctx, time.Minute, func() error {
			if n, err := p.reconciles(); err != nil || n <= n0 {
				return fmt.Errorf("re-put %d not reconciled yet (%v)", i, err)
			}
			return nil
		}); err != nil {
			return err
		}
		if err := quiet(ctx, p); err != nil {
			return err
		}
	}
	c, err := e.since(ctx, m, js)
	r.NoOpPuts, r.NoOp = puts, c
	return err
}

// burst puts b.burstPuts changed specs to one key, then waits until the
// last is Ready, and counts reconciles and writes.
func (b *bench) burst(ctx context.Context, e *env, p *proc, t *tracker, js *jsWrites, r *steadyResult) error {
	b.logf("burst: %d puts to one key", b.burstPuts)
	m, err := e.mark(ctx, js)
	if err != nil {
		return err
	}
	n0, err := p.reconciles()
	if err != nil {
		return err
	}
	var last uint64
	for i := range b.burstPuts {
		if last, err = e.put(ctx, component(0, api.EnvVar{Name: "BURST", Value: strconv.Itoa(i)})); err != nil {
			return err
		}
	}
	key := api.KeyOf(component(0))
	if err := t.waitAllReady(ctx, map[string]uint64{key: last}, time.Minute, p.alive); err != nil {
		return err
	}
	if err := quiet(ctx, p); err != nil {
		return err
	}
	n1, err := p.reconciles()
	if err != nil {
		return err
	}
	c, err := e.since(ctx, m, js)
	r.BurstPuts, r.BurstReconciles, r.Burst = b.burstPuts, n1-n0, c
	return err
}

// latency puts one changed spec every b.interval for b.latencyFor, each to
// the next component, and measures put → status Ready at that revision.
func (b *bench) latency(ctx context.Context, e *env, p *proc, t *tracker, n int, r *steadyResult) error {
	b.logf("latency: one put every %s for %s", b.interval, b.latencyFor)
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
		rev, err := e.put(ctx, c)
		if err != nil {
			return err
		}
		puts = append(puts, sent{api.KeyOf(c), rev, at})
		<-tick.C
	}
	want := map[string]uint64{}
	for _, s := range puts {
		want[s.key] = max(want[s.key], s.rev)
	}
	if err := t.waitAllReady(ctx, want, time.Minute, p.alive); err != nil {
		return err
	}
	for _, s := range puts {
		at, _ := t.readyAt(s.key, s.rev)
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

// restarts stops p and starts serve twice: once to count what a restart
// with nothing changed writes until ready, once with a changed spec put
// right after the process starts, timed until that put is Ready.
func (b *bench) restarts(ctx context.Context, e *env, p *proc, t *tracker, js *jsWrites, n int, r *steadyResult) error {
	b.logf("restart with nothing changed")
	if err := p.stop(); err != nil {
		return err
	}
	m, err := e.mark(ctx, js)
	if err != nil {
		return err
	}
	p2, err := startServe(b.bin, e, filepath.Join(b.out, fmt.Sprintf("serve-%d-restart.log", n)))
	if err != nil {
		return err
	}
	defer func() { _ = p2.stop() }()
	if err := poll(ctx, b.timeout, func() error {
		if err := p2.alive(); err != nil {
			return permanent{err}
		}
		if !p2.ready() {
			return fmt.Errorf("not ready")
		}
		return nil
	}); err != nil {
		return err
	}
	r.RestartReady = time.Since(p2.started)
	if err := quiet(ctx, p2); err != nil {
		return err
	}
	if r.RestartWrites, err = e.since(ctx, m, js); err != nil {
		return err
	}
	b.logf("restart to a new put reconciled")
	if err := p2.stop(); err != nil {
		return err
	}
	p3, err := startServe(b.bin, e, filepath.Join(b.out, fmt.Sprintf("serve-%d-restart-put.log", n)))
	if err != nil {
		return err
	}
	defer func() { _ = p3.stop() }()
	c := component(2, api.EnvVar{Name: "RESTART", Value: "1"})
	rev, err := e.put(ctx, c)
	if err != nil {
		return err
	}
	if err := t.waitAllReady(ctx, map[string]uint64{api.KeyOf(c): rev}, b.timeout, p3.alive); err != nil {
		return err
	}
	at, _ := t.readyAt(api.KeyOf(c), rev)
	r.RestartToNewPut = at.Sub(p3.started)
	return nil
}
