package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// coldResult is one cold convergence: n components published before the
// controller starts, timed from process start until the driver has seen
// every one Ready; or the floor's time for the same writes.
type coldResult struct {
	N       int           `json:"n"`
	Round   int           `json:"round"`
	Variant string        `json:"variant"` // "floor", "serve", or "serve " + the extra flags
	Time    time.Duration `json:"time"`
	// Usage of the controller process at convergence (zero for the floor).
	CPU     time.Duration `json:"cpu,omitempty"`
	PeakRSS int64         `json:"peakRSS,omitempty"`
	// APF is what the API server's Priority and Fairness did with the
	// controller's requests during the run.
	APF apfStats `json:"apf"`
	// Store is what the n components take in the broker at convergence.
	Store storeUse `json:"store"`
	// Steps is where a new component's time went (serve and the floor).
	Steps stepTimes `json:"steps,omitempty"`
	// MachineBusy is the share of the machine's CPU (all cores, every
	// process) that was busy during the run: near 1, the run was CPU
	// bound; well below, it waited on round trips.
	MachineBusy float64  `json:"machineBusy,omitempty"`
	Parts       partsCPU `json:"parts"`
	machine0    machineTimes
}

// runFloor measures the floor for n components on a fresh env. When then
// is not nil it runs on that env, checked, before it is torn down.
func (b *bench) runFloor(ctx context.Context, n, round int, then func(*env) error) (coldResult, error) {
	e, err := b.newEnv(ctx)
	if err != nil {
		return coldResult{}, err
	}
	defer e.close(ctx)
	b.logf("floor: %d components, %d writers", n, b.workers)
	steps := newStepClock()
	defer b.partsProfiles(e, fmt.Sprintf("%d-floor-r%d.pb.gz", n, round))()
	machine0 := readMachine()
	d, err := e.floor(ctx, n, b.workers, steps)
	if err != nil {
		return coldResult{}, err
	}
	r := coldResult{N: n, Round: round, Variant: "floor", Time: d, Steps: steps.means()}
	r.MachineBusy, r.Parts = busySince(machine0)
	b.logf("floor: %d components in %s, machine %.0f %% busy, %s", n, d.Round(time.Millisecond), 100*r.MachineBusy, r.Parts)
	if r.Store, err = e.storeUse(ctx); err != nil {
		return r, err
	}
	if err := e.verify(ctx, n); err != nil || then == nil {
		return r, err
	}
	return r, then(e)
}

// runCold measures serve's cold convergence for n components on a fresh
// env, serve started with extra flags. When then is not nil it runs on the
// converged env and process before they are torn down. With profile it
// saves serve's CPU profile from start and its heap at convergence.
func (b *bench) runCold(ctx context.Context, n, round int, extra []string,
	then func(*env, *proc, *tracker) error, profile bool) (coldResult, error) {
	r := coldResult{N: n, Round: round, Variant: variantName(extra)}
	e, err := b.newEnv(ctx)
	if err != nil {
		return r, err
	}
	defer e.close(ctx)
	want, err := e.publishAll(ctx, n)
	if err != nil {
		return r, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t, err := e.track(ctx)
	if err != nil {
		return r, err
	}
	b.logf("%s: %d components published; starting serve", r.Variant, n)
	defer b.partsProfiles(e, fmt.Sprintf("%d-%s-r%d.pb.gz", n, slug(r.Variant), round))()
	r.machine0 = readMachine()
	p, err := b.startServe(e, filepath.Join(b.out, fmt.Sprintf("serve-%d-%s-r%d.log", n, slug(r.Variant), round)), extra...)
	if err != nil {
		return r, err
	}
	defer func() { _ = p.stop() }()
	if profile {
		go b.cpuProfile(p, b.profileFor, fmt.Sprintf("cpu-%d-%s.pb.gz", n, slug(r.Variant)))
	}
	if err := t.waitAllReady(ctx, want, b.timeout, p.alive); err != nil {
		return r, fmt.Errorf("%s, %d components: %w", r.Variant, n, err)
	}
	if err := b.finishCold(ctx, e, p, &r); err != nil {
		return r, err
	}
	if r.Steps, err = serveSteps(p); err != nil {
		return r, err
	}
	if profile {
		if err := b.heapProfile(p, fmt.Sprintf("heap-%d-%s.pb.gz", n, slug(r.Variant))); err != nil {
			return r, err
		}
	}
	if then != nil {
		return r, then(e, p, t)
	}
	return r, nil
}

// finishCold records a converged controller's time, usage and APF figures
// and checks that it made every object.
func (b *bench) finishCold(ctx context.Context, e *env, p *proc, r *coldResult) error {
	r.Time = time.Since(p.started)
	r.MachineBusy, r.Parts = busySince(r.machine0)
	u, err := p.usage()
	if err != nil {
		return err
	}
	r.CPU, r.PeakRSS = u.CPU, u.PeakRSS
	b.logf("%s: %d components converged in %s, machine %.0f %% busy, %s", r.Variant, r.N, r.Time.Round(time.Millisecond), 100*r.MachineBusy, r.Parts)
	if r.APF, err = e.apf(ctx); err != nil {
		return err
	}
	if r.Store, err = e.storeUse(ctx); err != nil {
		return err
	}
	b.logf("%s: store limit %d, set aside %d, accounted %d, on disk %d bytes", r.Variant,
		r.Store.Limit, r.Store.Reserved, r.Store.Accounted, r.Store.OnDisk)
	return e.verify(ctx, r.N)
}

func variantName(extra []string) string {
	if len(extra) == 0 {
		return "serve"
	}
	name := "serve"
	for _, a := range extra {
		name += " " + a
	}
	return name
}

// slug makes a variant name usable in a file name.
func slug(s string) string {
	out := []byte(strings.ToLower(s))
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			out[i] = '_'
		}
	}
	return string(out)
}
