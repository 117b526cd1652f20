package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// The sustained churn (#26): changed specs put to random keys at a fixed
// rate, stepped up, on a converged controller.
const (
	// churnPublishers put at once, so that one slow put does not hold
	// the schedule back.
	churnPublishers = 8
	// churnFloorWindow is how long the floor is driven as fast as it goes.
	churnFloorWindow = 20 * time.Second
	// churnP99Limit is the p99 the report's "highest rate" stays under.
	churnP99Limit = 100 * time.Millisecond
)

// churnResult is one controller's sustained churn at N components.
type churnResult struct {
	N      int         `json:"n"`
	System string      `json:"system"` // "serve" or a baseline variant
	Steps  []churnStep `json:"steps"`
}

// churnStep is one rate: Intended puts of a changed spec, Rate a second for
// For, each to a key drawn at random. Latency runs from a put's
// acknowledgement until the driver saw its revision Ready; a put superseded
// by a later put to its key before it was applied is Coalesced, not a
// sample.
type churnStep struct {
	Rate     int           `json:"rate"`
	For      time.Duration `json:"for"`
	Intended int           `json:"intended"`
	Puts     int           `json:"puts"`   // made within the window
	Behind   time.Duration `json:"behind"` // the latest a put started after its time
	// Samples, Coalesced and the quantiles of the samples.
	Samples   int           `json:"samples"`
	Coalesced int           `json:"coalesced"`
	P50       time.Duration `json:"p50"`
	P99       time.Duration `json:"p99"`
	Max       time.Duration `json:"max"`
	// Span runs from the first put until every put was seen applied; CPU
	// and Reconciles are the controller's over it.
	Span       time.Duration `json:"span"`
	CPU        time.Duration `json:"cpu"`
	Reconciles float64       `json:"reconciles"`
}

// churnFloor is the floor's maximum update rate at N: Updates (rawUpdate
// of a changed spec of a random component) from Workers goroutines driven as
// fast as they go for Window, which took Elapsed.
type churnFloor struct {
	N         int           `json:"n"`
	Workers   int           `json:"workers"`
	Window    time.Duration `json:"window"`
	Updates   int           `json:"updates"`
	Elapsed   time.Duration `json:"elapsed"`
	PerSecond float64       `json:"perSecond"`
}

// churnPut is one put made: its key, revision, and when it was acknowledged.
type churnPut struct {
	key string
	rev uint64
	at  time.Time
}

// keptUp: the schedule made (nearly) every put it meant to.
func (s churnStep) keptUp() bool { return s.Puts*100 >= s.Intended*99 }

// churn runs a step at every rate of b.churnRates, lowest first, each on a
// quiet controller.
func (b *bench) churn(ctx context.Context, p *proc, tg target, n int) (churnResult, error) {
	r := churnResult{N: n, System: tg.system}
	for _, rate := range b.churnRates {
		if err := quiet(ctx, p); err != nil {
			return r, err
		}
		s, err := b.churnAt(ctx, p, tg, n, rate)
		if err != nil {
			return r, fmt.Errorf("%s churn at %d/s: %w", tg.system, rate, err)
		}
		r.Steps = append(r.Steps, s)
		b.logf("%s churn %d/s: %d of %d puts, p50 %s, p99 %s, max %s, %d coalesced, CPU %.1f s over %s",
			tg.system, rate, s.Puts, s.Intended, ms(s.P50), ms(s.P99), ms(s.Max), s.Coalesced,
			s.CPU.Seconds(), s.Span.Round(time.Millisecond))
	}
	return r, quiet(ctx, p)
}

// churnAt puts at rate for b.churnFor, waits until every put is applied
// and scores the puts.
func (b *bench) churnAt(ctx context.Context, p *proc, tg target, n, rate int) (churnStep, error) {
	s := churnStep{Rate: rate, For: b.churnFor, Intended: int(int64(b.churnFor) * int64(rate) / int64(time.Second))}
	b.logf("%s churn: %d puts a second for %s over %d keys", tg.system, rate, b.churnFor, n)
	u0, err := p.usage()
	if err != nil {
		return s, err
	}
	n0, err := p.reconciles()
	if err != nil {
		return s, err
	}
	start := time.Now()
	puts, behind, err := paced(ctx, tg, n, rate, s.Intended, start, b.churnFor)
	if err != nil {
		return s, err
	}
	if err := tg.ready.waitAllReady(ctx, lastRevs(puts), b.timeout, p.alive); err != nil {
		return s, err
	}
	s.Span = time.Since(start)
	u1, err := p.usage()
	if err != nil {
		return s, err
	}
	n1, err := p.reconciles()
	if err != nil {
		return s, err
	}
	s.CPU, s.Reconciles, s.Puts, s.Behind = u1.CPU-u0.CPU, n1-n0, len(puts), behind
	lat, coalesced, err := scoreChurn(puts, tg.ready)
	s.Samples, s.Coalesced = len(lat), coalesced
	if len(lat) > 0 {
		s.P50, s.P99, s.Max = quantile(lat, 0.50), quantile(lat, 0.99), lat[len(lat)-1]
	}
	return s, err
}

// paced makes intended puts of a changed spec, the i-th due at start + i/rate
// (a late put does not move the ones after it), from churnPublishers
// goroutines, each to a component drawn at random from 0..n-1 (the same
// draws for every controller at a rate), with a value no other put has. A
// put still waiting for a publisher when the window ends is not made: the
// schedule did not keep up. It returns the puts made and the latest any
// started after it was due.
func paced(ctx context.Context, tg target, n, rate, intended int, start time.Time, window time.Duration) ([]churnPut, time.Duration, error) {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(rate)))
	keys := make([]int, intended)
	for i := range keys {
		keys[i] = rng.IntN(n)
	}
	end := start.Add(window)
	var mu sync.Mutex
	var puts []churnPut
	var behind time.Duration
	err := parallel(intended, churnPublishers, func(i int) error {
		due := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		if err := sleepUntil(ctx, due); err != nil {
			return err
		}
		late := time.Since(due)
		if !time.Now().Before(end) {
			return nil
		}
		c := component(keys[i], api.EnvVar{Name: "CHURN", Value: fmt.Sprintf("%d/s-%d", rate, i)})
		key, rev, err := tg.put(ctx, c)
		if err != nil {
			return err
		}
		at := time.Now()
		mu.Lock()
		puts, behind = append(puts, churnPut{key, rev, at}), max(behind, late)
		mu.Unlock()
		return nil
	})
	return puts, behind, err
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// lastRevs is every key's latest revision put.
func lastRevs(puts []churnPut) map[string]uint64 {
	want := map[string]uint64{}
	for _, p := range puts {
		want[p.key] = max(want[p.key], p.rev)
	}
	return want
}

// scoreChurn tells samples from coalesced puts: a put is coalesced when the
// first Ready seen for its key at its revision or later is at the revision
// of a later put to that key (it was superseded before it was applied).
// The samples come back sorted.
func scoreChurn(puts []churnPut, ready readiness) ([]time.Duration, int, error) {
	sorted := slices.Clone(puts)
	slices.SortFunc(sorted, func(a, b churnPut) int {
		return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.rev, b.rev))
	})
	var lat []time.Duration
	coalesced := 0
	for i, p := range sorted {
		next := uint64(math.MaxUint64)
		if i+1 < len(sorted) && sorted[i+1].key == p.key {
			next = sorted[i+1].rev
		}
		seen, ok := ready.firstReady(p.key, p.rev)
		switch {
		case !ok:
			return nil, 0, fmt.Errorf("%s revision %d was never seen Ready", p.key, p.rev)
		case seen.rev >= next:
			coalesced++
		default:
			lat = append(lat, seen.at.Sub(p.at))
		}
	}
	slices.Sort(lat)
	return lat, coalesced, nil
}

// floorRate drives the floor's update writes (rawUpdate: the Deployment's
// server-side apply and a status record, what serve writes for a changed
// env value) from workers
// goroutines as fast as they go for window, each for a changed spec of a
// component drawn at random from 0..n-1, which the floor has made already.
func (e *env) floorRate(ctx context.Context, n, workers int, window time.Duration) (churnFloor, error) {
	cluster := render.DefaultCluster()
	var done, rev atomic.Int64
	rev.Store(int64(n)) // the floor wrote components 0..n-1 at revisions 1..n
	start := time.Now()
	end := start.Add(window)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(n), uint64(w)))
			for time.Now().Before(end) && ctx.Err() == nil {
				r := rev.Add(1)
				c := component(rng.IntN(n), api.EnvVar{Name: "CHURN", Value: "floor-" + strconv.FormatInt(r, 10)})
				if errs[w] = e.rawUpdate(ctx, c, uint64(r), cluster); errs[w] != nil {
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	f := churnFloor{N: n, Workers: workers, Window: window, Updates: int(done.Load()), Elapsed: time.Since(start)}
	f.PerSecond = float64(f.Updates) / f.Elapsed.Seconds()
	return f, errors.Join(append(errs, ctx.Err())...)
}

// parseRates reads -churn-rates: puts per second, sorted ascending.
func parseRates(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r < 1 {
			return nil, fmt.Errorf("-churn-rates %q: want puts per second, comma-separated", s)
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// churnTables writes, for each N with a churn, a row per rate (serve's,
// and B1's beside it when measured), the floor's maximum update rate and
// the highest rate at which p99 stayed under churnP99Limit.
func churnTables(w io.Writer, r results) {
	for _, serve := range r.Churn {
		if serve.System != "serve" || len(serve.Steps) == 0 {
			continue
		}
		var others []churnResult
		for _, c := range r.Churn {
			if c.N == serve.N && c.System != "serve" {
				others = append(others, c)
			}
		}
		fmt.Fprintf(w, "\nSustained churn at N = %d: a changed spec put to a random key at each rate for %s; "+
			"put (acknowledged) → Ready at its revision; a put superseded by a later put to its key before it was "+
			"applied counts as coalesced, not as a sample; CPU: the controller's from the first put until every put "+
			"was applied, and its share of one core over that time.\n\n", serve.N, serve.Steps[0].For)
		churnRows(w, serve, others)
		for _, f := range r.ChurnFloor {
			if f.N == serve.N {
				fmt.Fprintf(w, "\nFloor's maximum update rate at N = %d: %.0f updates/s (%d in %.1f s from %d writers; each "+
					"the writes serve makes for the change: the Deployment's server-side apply and a status record).\n",
					f.N, f.PerSecond, f.Updates, f.Elapsed.Seconds(), f.Workers)
			}
		}
		fmt.Fprintf(w, "\nhighest rate with p99 < %s: serve %s", ms(churnP99Limit), highestRate(serve.Steps))
		for _, o := range others {
			fmt.Fprintf(w, ", %s %s", o.System, highestRate(o.Steps))
		}
		fmt.Fprintln(w)
	}
}

// churnRows writes the table of serve's steps, with the others' beside.
func churnRows(w io.Writer, serve churnResult, others []churnResult) {
	fmt.Fprint(w, "| rate | serve p50 | p99 | max | samples / coalesced | CPU | kept up |")
	for _, o := range others {
		fmt.Fprintf(w, " %s p50 / p99 / CPU |", o.System)
	}
	fmt.Fprint(w, "\n|---|---|---|---|---|---|---|")
	fmt.Fprintln(w, strings.Repeat("---|", len(others)))
	for _, s := range serve.Steps {
		fmt.Fprintf(w, "| %d/s | %s | %s | %s | %d / %d | %s | %s |", s.Rate, ms(s.P50), ms(s.P99), ms(s.Max),
			s.Samples, s.Coalesced, churnCPU(s), keptUp(s))
		for _, o := range others {
			i := slices.IndexFunc(o.Steps, func(x churnStep) bool { return x.Rate == s.Rate })
			if i < 0 {
				fmt.Fprint(w, " not measured |")
				continue
			}
			x := o.Steps[i]
			fmt.Fprintf(w, " %s / %s / %s", ms(x.P50), ms(x.P99), churnCPU(x))
			if !x.keptUp() {
				fmt.Fprintf(w, "; kept up: %s", keptUp(x))
			}
			fmt.Fprintf(w, "; %d coalesced |", x.Coalesced)
		}
		fmt.Fprintln(w)
	}
}

func churnCPU(s churnStep) string {
	return fmt.Sprintf("%.1f s, %.1f%%", s.CPU.Seconds(), 100*s.CPU.Seconds()/s.Span.Seconds())
}

func keptUp(s churnStep) string {
	return fmt.Sprintf("%d / %d puts, ≤ %s late", s.Puts, s.Intended, ms(s.Behind))
}

// highestRate is the highest rate up to which every step kept up and had
// p99 under churnP99Limit.
func highestRate(steps []churnStep) string {
	best := "none"
	for i, s := range steps {
		if s.Samples == 0 || s.P99 >= churnP99Limit || !s.keptUp() {
			return best
		}
		best = fmt.Sprintf("%d/s", s.Rate)
		if i == len(steps)-1 && len(steps) > 1 {
			best += " (every rate measured)"
		}
	}
	return best
}
