// Command bench measures `tinyctl serve` at scale: the real controller
// binary, built from this tree and run with its defaults, against a real
// kube-apiserver and etcd (internal/localkube) and an embedded nats-server,
// side by side with a raw-write floor in the same run. See
// docs/benchmarks.md for what each figure means and how to read them.
//
//	cd bench && go run ./cmd/bench                 # N=100 and 1,000 (go tool task bench)
//	cd bench && go run ./cmd/bench -n 100 -steady 0 -idle 5s   # a quick look
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tinyctl/tinyctl/reconcile"
)

// bench is one run's settings and the tinyctl binary it measures.
type bench struct {
	bin, out     string
	crBin        string // the controller-runtime baseline; "" when not measured
	log          io.Writer
	workers      int
	timeout      time.Duration
	idleFor      time.Duration
	burstPuts    int
	interval     time.Duration
	latencyFor   time.Duration
	resync       time.Duration
	resyncWithin time.Duration
	// profile: CPU (from process start, profileFor) and heap (at
	// convergence) profiles of serve at profileN components.
	profile    bool
	profileN   int
	profileFor time.Duration
	// profileParts: CPU profiles of the API server (over profileFor) and
	// of the driver from the start of every cold run.
	profileParts bool
	// churnRates (puts per second, ascending) and churnFor: the sustained
	// churn's steps and how long each lasts.
	churnRates []int
	churnFor   time.Duration
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// imageTags are the build tags of the controller image's binary
// (internal/ociimage's DefaultTags, not imported here: it would bring the
// image builder's dependencies into this module).
const imageTags = "noinstall"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	b := &bench{log: os.Stderr, workers: reconcile.DefaultWorkers}
	fs, f := newFlags(b)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.report != "" {
		return rewrite(f.report, b.out, os.Stdout)
	}
	plan, err := f.plan(b)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(b.out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "tinyctl-bench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := b.buildAll(ctx, f.repo, tmp, f.baseline); err != nil {
		return err
	}
	res := results{Machine: machine(), Workers: b.workers, Started: time.Now(), Command: strings.Join(os.Args, " ")}
	for _, m := range plan {
		if err := b.measure(ctx, m, &res); err != nil {
			// What was measured before the failure is kept.
			res.Failed = err.Error()
			return errors.Join(err, res.write(b.out, os.Stdout))
		}
	}
	return res.write(b.out, os.Stdout)
}

// flags are the driver's command-line settings that are not the bench's
// own fields.
type flags struct {
	ns, limited, steadyAt, repo, baselineLimits, churnAt, churnRates, report string
	rounds, compareMax, baselineMax                                          int
	baseline, steadyBaseline                                                 bool
	resync                                                                   time.Duration
}

// newFlags defines the command line, into b and the flags returned.
func newFlags(b *bench) (*flag.FlagSet, *flags) {
	f := &flags{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&f.ns, "n", "100,1000", "component counts to converge, comma-separated")
	fs.IntVar(&f.rounds, "rounds", 1, "times to measure each count; even rounds run the floor, serve and the baselines in the reverse order, and the report sums the rounds")
	fs.StringVar(&f.limited, "compare", "--kube-qps=50,--kube-burst=100", `serve flags of the comparison run, comma-separated ("": none)`)
	fs.IntVar(&f.compareMax, "compare-max", 1000, "largest count measured with -compare too (at 50 QPS, 10,000 components take a quarter of an hour)")
	fs.StringVar(&f.steadyAt, "steady", "1000", `counts (of -n, comma-separated) at which to measure the steady state: idle, no-op, one change, burst, latency, resync, restarts ("0": none)`)
	fs.StringVar(&f.repo, "repo", "", "tinyctl source tree to build serve from (default: the one above this directory)")
	fs.StringVar(&b.out, "out", "out", "directory for results.json, results.md, the chart and serve's logs")
	fs.DurationVar(&b.timeout, "timeout", 30*time.Minute, "longest a convergence may take")
	fs.DurationVar(&b.idleFor, "idle", time.Minute, "idle window for CPU and RSS")
	fs.IntVar(&b.burstPuts, "burst", 1000, "puts to one key in the coalescing burst")
	fs.DurationVar(&b.interval, "interval", 100*time.Millisecond, "time between puts in the latency run")
	fs.DurationVar(&b.latencyFor, "latency", 30*time.Second, "length of the latency run")
	fs.BoolVar(&f.baseline, "baseline", true, "measure the controller-runtime baselines B0 and B1 (cmd/crbaseline) too, at every count up to -baseline-max")
	fs.IntVar(&f.baselineMax, "baseline-max", 1000, "largest count the baselines are measured at")
	fs.StringVar(&f.baselineLimits, "baseline-limits", "", `B1's client-side limits, comma-separated crbaseline flags (default none, as serve's default), e.g. "-kube-qps=50,-kube-burst=100"`)
	fs.BoolVar(&f.steadyBaseline, "steady-baseline", true, "measure B1's steady state too, at -steady (it then resyncs every 5 minutes, as serve's full recheck does)")
	fs.DurationVar(&f.resync, "resync", 10*reconcile.DefaultRecheck, "the controllers' periodic resync, measured in the steady state: serve's full recheck (every tenth --recheck; serve gets --recheck of a tenth of this unless it is serve's default) and B1's -sync-period; 0: not measured, serve keeps its default")
	fs.DurationVar(&b.resyncWithin, "resync-within", 0, "longest wait for a controller's periodic resync in the steady state (default: -resync plus 2 minutes)")
	fs.BoolVar(&b.profile, "profile", false, "save serve's CPU profile (from start) and heap profile (at convergence) at the largest -n into -out")
	fs.DurationVar(&b.profileFor, "profile-for", 30*time.Second, "length of the CPU profile")
	fs.BoolVar(&b.profileParts, "profile-parts", false, "save CPU profiles of the API server (over -profile-for) and of the driver with its embedded nats-server (the whole run) from the start of every cold run (floor, serve, baselines) into -out")
	fs.StringVar(&f.churnAt, "churn", "0", `counts (of -n, comma-separated) at which to measure the sustained churn: changed specs put to random keys at each -churn-rates for -churn-for, serve and B1 (when measured at that count), beside the floor's maximum update rate ("0": none)`)
	fs.StringVar(&f.churnRates, "churn-rates", "50,100,200,500", "the churn's rates, puts per second, comma-separated")
	fs.DurationVar(&b.churnFor, "churn-for", 2*time.Minute, "how long the churn puts at each rate")
	fs.StringVar(&f.report, "report", "", "measure nothing: write the tables and chart of this results.json into -out")
	return fs, f
}

// plan checks the flags, completes b's settings from them and returns
// the measurements to make, in order.
func (f *flags) plan(b *bench) ([]measurement, error) {
	counts, err := parseCounts(f.ns)
	if err != nil {
		return nil, err
	}
	b.profileN = slices.Max(counts)
	b.resync = f.resync
	if b.resyncWithin == 0 {
		b.resyncWithin = b.resync + 2*time.Minute
	}
	steadyNs, err := countsOf("-steady", f.steadyAt, counts)
	if err != nil {
		return nil, err
	}
	churnNs, err := countsOf("-churn", f.churnAt, counts)
	if err != nil {
		return nil, err
	}
	if b.churnRates, err = parseRates(f.churnRates); err != nil {
		return nil, err
	}
	if f.repo == "" {
		if f.repo, err = findRepo(); err != nil {
			return nil, err
		}
	}
	compare, limits := splitList(f.limited), splitList(f.baselineLimits)
	var out []measurement
	for round := 1; round <= f.rounds; round++ {
		for _, n := range counts {
			m := measurement{n: n, round: round, steady: slices.Contains(steadyNs, n) && round == 1,
				churn: slices.Contains(churnNs, n) && round == 1, compare: compare}
			if n > f.compareMax {
				m.compare = nil
			}
			if f.baseline && n <= f.baselineMax {
				m.baselines = b.baselines(limits)
				m.steadyBaseline = m.steady && f.steadyBaseline
				m.churnBaseline = m.churn
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// buildAll builds serve and, with baseline, the controller-runtime
// baseline into dir.
func (b *bench) buildAll(ctx context.Context, repo, dir string, baseline bool) error {
	var err error
	if b.bin, err = build(ctx, repo, "./cmd/tinyctl", dir, imageTags); err != nil {
		return err
	}
	if baseline {
		b.crBin, err = build(ctx, filepath.Join(repo, "bench"), "./cmd/crbaseline", dir, "")
	}
	return err
}

// splitList splits a comma-separated list ("": none).
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// measurement is what to measure at one count in one round.
type measurement struct {
	n, round               int
	steady, steadyBaseline bool
	churn, churnBaseline   bool
	compare                []string
	baselines              []baselineVariant
}

// What runs on a converged controller before it is torn down.
type (
	serveThen    = func(*env, *proc, *tracker) error
	baselineThen = func(*env, *proc, *crTracker) error
)

// measure runs the floor (then its maximum update rate, with the churn),
// serve with its defaults (then the steady-state measurements and the
// churn, when asked), serve with the comparison flags and the
// controller-runtime baselines (the last, B1, then its steady state and
// churn too). Even rounds run them in the reverse order, so that over
// pairs of rounds every variant has run in every position: on this shared
// machine a run's place in the sequence can move its time.
func (b *bench) measure(ctx context.Context, m measurement, res *results) error {
	var floorThen func(*env) error
	if m.churn {
		floorThen = func(e *env) error {
			b.logf("floor: maximum update rate over %s, %d writers", churnFloorWindow, b.workers)
			f, err := e.floorRate(ctx, m.n, b.workers, churnFloorWindow)
			if err == nil {
				res.ChurnFloor = append(res.ChurnFloor, f)
			}
			return err
		}
	}
	cold := func(r coldResult, err error) error {
		if err == nil {
			res.Cold = append(res.Cold, r)
		}
		return err
	}
	runs := []func() error{
		func() error { return cold(b.runFloor(ctx, m.n, m.round, floorThen)) },
		func() error { return b.measureServe(ctx, m, res) },
	}
	if m.compare != nil {
		runs = append(runs, func() error { return cold(b.runCold(ctx, m.n, m.round, m.compare, nil, false)) })
	}
	runs = append(runs, b.baselineRuns(ctx, m, res)...)
	if m.round%2 == 0 {
		slices.Reverse(runs)
	}
	for _, run := range runs {
		if err := run(); err != nil {
			return err
		}
	}
	return nil
}

// measureServe runs serve with its defaults, then its steady state or
// churn; when both are asked, the churn gets a converged serve of its own
// (in no cold figure), since the steady state ends by restarting it. The
// profiled run comes last.
func (b *bench) measureServe(ctx context.Context, m measurement, res *results) error {
	var then, apart serveThen
	steady := func(e *env, p *proc, t *tracker) error {
		s, err := b.steady(ctx, e, p, b.serveTarget(e, t, m.n), m.n)
		res.Steady = append(res.Steady, s)
		return err
	}
	churn := func(e *env, p *proc, t *tracker) error {
		c, err := b.churn(ctx, p, b.serveTarget(e, t, m.n), m.n)
		res.Churn = append(res.Churn, c)
		return err
	}
	switch {
	case m.steady && m.churn:
		then, apart = steady, churn
	case m.steady:
		then = steady
	case m.churn:
		then = churn
	}
	r, err := b.runCold(ctx, m.n, m.round, nil, then, false)
	if err != nil {
		return err
	}
	res.Cold = append(res.Cold, r)
	if apart != nil {
		if _, err := b.runCold(ctx, m.n, m.round, nil, apart, false); err != nil {
			return err
		}
	}
	if b.profile && m.n == b.profileN && m.round == 1 {
		// Profiled apart, so that the profiler's cost is in no figure.
		_, err = b.runCold(ctx, m.n, m.round, nil, nil, true)
	}
	return err
}

// baselineRuns returns a run of each baseline variant; the last, B1, then
// gets its steady state and churn as serve does.
func (b *bench) baselineRuns(ctx context.Context, m measurement, res *results) []func() error {
	runs := make([]func() error, 0, len(m.baselines))
	for i, v := range m.baselines {
		runs = append(runs, func() error {
			run, then, apart := v, baselineThen(nil), baselineThen(nil)
			if i == len(m.baselines)-1 {
				run, then, apart = b.baselineThens(ctx, m, v, res)
			}
			r, err := b.runBaseline(ctx, m.n, m.round, run, then)
			if err != nil {
				return err
			}
			res.Cold = append(res.Cold, r)
			if apart != nil {
				_, err = b.runBaseline(ctx, m.n, m.round, v, apart)
			}
			return err
		})
	}
	return runs
}

// baselineThens is what B1 (variant v) runs converged: the variant to run
// (with the periodic resync under measurement for the steady state), then
// its steady state or churn, and the churn apart when both are asked.
func (b *bench) baselineThens(ctx context.Context, m measurement, v baselineVariant, res *results) (baselineVariant, baselineThen, baselineThen) {
	var churn baselineThen
	if m.churnBaseline {
		churn = func(e *env, p *proc, t *crTracker) error {
			c, err := b.churn(ctx, p, b.baselineTarget(e, t, v, m.n), m.n)
			res.Churn = append(res.Churn, c)
			return err
		}
	}
	if !m.steadyBaseline {
		return v, churn, nil
	}
	run := v
	if b.resync > 0 {
		run.args = append(slices.Clone(v.args), "-sync-period", b.resync.String())
	}
	steady := func(e *env, p *proc, t *crTracker) error {
		s, err := b.steady(ctx, e, p, b.baselineTarget(e, t, run, m.n), m.n)
		res.Steady = append(res.Steady, s)
		return err
	}
	return run, steady, churn
}

// countsOf reads a flag of counts that must be among -n ("0" or "": none).
func countsOf(name, s string, counts []int) ([]int, error) {
	if s == "0" || s == "" {
		return nil, nil
	}
	out, err := parseCounts(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, n := range out {
		if !slices.Contains(counts, n) {
			return nil, fmt.Errorf("%s %d is not one of -n %v", name, n, counts)
		}
	}
	return out, nil
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("-n %q: want counts of at least 2, comma-separated", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// findRepo walks up from the working directory to the main module.
func findRepo() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && isMainModule(string(b)) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no tinyctl tree at or above %s: pass -repo", wd)
		}
	}
}

func isMainModule(gomod string) bool {
	for _, line := range strings.Split(gomod, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1] == "github.com/tinyctl/tinyctl"
		}
	}
	return false
}
