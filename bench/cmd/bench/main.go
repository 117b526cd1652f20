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
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	b := &bench{log: os.Stderr, workers: reconcile.DefaultWorkers}
	ns := fs.String("n", "100,1000", "component counts to converge, comma-separated")
	rounds := fs.Int("rounds", 1, "times to measure each count (alternating floor and serve)")
	limited := fs.String("compare", "--kube-qps=50,--kube-burst=100", `serve flags of the comparison run, comma-separated ("": none)`)
	compareMax := fs.Int("compare-max", 1000, "largest count measured with -compare too (at 50 QPS, 10,000 components take a quarter of an hour)")
	steadyAt := fs.String("steady", "1000", `counts (of -n, comma-separated) at which to measure the steady state: idle, no-op, one change, burst, latency, resync, restarts ("0": none)`)
	repo := fs.String("repo", "", "tinyctl source tree to build serve from (default: the one above this directory)")
	fs.StringVar(&b.out, "out", "out", "directory for results.json, results.md, the chart and serve's logs")
	fs.DurationVar(&b.timeout, "timeout", 30*time.Minute, "longest a convergence may take")
	fs.DurationVar(&b.idleFor, "idle", time.Minute, "idle window for CPU and RSS")
	fs.IntVar(&b.burstPuts, "burst", 1000, "puts to one key in the coalescing burst")
	fs.DurationVar(&b.interval, "interval", 100*time.Millisecond, "time between puts in the latency run")
	fs.DurationVar(&b.latencyFor, "latency", 30*time.Second, "length of the latency run")
	baseline := fs.Bool("baseline", true, "measure the controller-runtime baselines B0 and B1 (cmd/crbaseline) too, at every count up to -baseline-max")
	baselineMax := fs.Int("baseline-max", 1000, "largest count the baselines are measured at")
	baselineLimits := fs.String("baseline-limits", "", `B1's client-side limits, comma-separated crbaseline flags (default none, as serve's default), e.g. "-kube-qps=50,-kube-burst=100"`)
	steadyBaseline := fs.Bool("steady-baseline", true, "measure B1's steady state too, at -steady (it then resyncs every 5 minutes, as serve's full recheck does)")
	resync := fs.Duration("resync", 10*reconcile.DefaultRecheck, "the controllers' periodic resync, measured in the steady state: serve's full recheck (every tenth --recheck; serve gets --recheck of a tenth of this unless it is serve's default) and B1's -sync-period; 0: not measured, serve keeps its default")
	fs.DurationVar(&b.resyncWithin, "resync-within", 0, "longest wait for a controller's periodic resync in the steady state (default: -resync plus 2 minutes)")
	fs.BoolVar(&b.profile, "profile", false, "save serve's CPU profile (from start) and heap profile (at convergence) at the largest -n into -out")
	fs.DurationVar(&b.profileFor, "profile-for", 30*time.Second, "length of the CPU profile")
	report := fs.String("report", "", "measure nothing: write the tables and chart of this results.json into -out")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *report != "" {
		return rewrite(*report, b.out, os.Stdout)
	}
	counts, err := parseCounts(*ns)
	if err != nil {
		return err
	}
	b.profileN = slices.Max(counts)
	b.resync = *resync
	if b.resyncWithin == 0 {
		b.resyncWithin = b.resync + 2*time.Minute
	}
	var steadyNs []int
	if *steadyAt != "0" && *steadyAt != "" {
		if steadyNs, err = parseCounts(*steadyAt); err != nil {
			return fmt.Errorf("-steady: %w", err)
		}
	}
	for _, n := range steadyNs {
		if !slices.Contains(counts, n) {
			return fmt.Errorf("-steady %d is not one of -n %s", n, *ns)
		}
	}
	if *repo == "" {
		if *repo, err = findRepo(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(b.out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "tinyctl-bench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if b.bin, err = build(ctx, *repo, "./cmd/tinyctl", tmp, imageTags); err != nil {
		return err
	}
	if *baseline {
		if b.crBin, err = build(ctx, filepath.Join(*repo, "bench"), "./cmd/crbaseline", tmp, ""); err != nil {
			return err
		}
	}
	var compare []string
	if *limited != "" {
		compare = strings.Split(*limited, ",")
	}
	var limits []string
	if *baselineLimits != "" {
		limits = strings.Split(*baselineLimits, ",")
	}
	res := results{Machine: machine(), Workers: b.workers, Started: time.Now(), Command: strings.Join(os.Args, " ")}
	for round := 1; round <= *rounds; round++ {
		for _, n := range counts {
			m := measurement{n: n, round: round, steady: slices.Contains(steadyNs, n) && round == 1, compare: compare}
			if n > *compareMax {
				m.compare = nil
			}
			if b.crBin != "" && n <= *baselineMax {
				m.baselines = b.baselines(limits)
				m.steadyBaseline = m.steady && *steadyBaseline
			}
			if err := b.measure(ctx, m, &res); err != nil {
				// What was measured before the failure is kept.
				res.Failed = err.Error()
				return errors.Join(err, res.write(b.out, os.Stdout))
			}
		}
	}
	return res.write(b.out, os.Stdout)
}

// measurement is what to measure at one count in one round.
type measurement struct {
	n, round               int
	steady, steadyBaseline bool
	compare                []string
	baselines              []baselineVariant
}

// measure runs the floor, serve with its defaults (then the steady-state
// measurements, when asked), serve with the comparison flags and the
// controller-runtime baselines (the last, B1, then its steady state too).
func (b *bench) measure(ctx context.Context, m measurement, res *results) error {
	r, err := b.runFloor(ctx, m.n, m.round)
	if err != nil {
		return err
	}
	res.Cold = append(res.Cold, r)
	var then func(*env, *proc, *tracker) error
	if m.steady {
		then = func(e *env, p *proc, t *tracker) error {
			s, err := b.steady(ctx, e, p, b.serveTarget(e, t, m.n), m.n)
			res.Steady = append(res.Steady, s)
			return err
		}
	}
	if r, err = b.runCold(ctx, m.n, m.round, nil, then, false); err != nil {
		return err
	}
	res.Cold = append(res.Cold, r)
	if b.profile && m.n == b.profileN && m.round == 1 {
		// Profiled apart, so that the profiler's cost is in no figure.
		if _, err = b.runCold(ctx, m.n, m.round, nil, nil, true); err != nil {
			return err
		}
	}
	if m.compare != nil {
		if r, err = b.runCold(ctx, m.n, m.round, m.compare, nil, false); err != nil {
			return err
		}
		res.Cold = append(res.Cold, r)
	}
	for i, v := range m.baselines {
		var then func(*env, *proc, *crTracker) error
		if m.steadyBaseline && i == len(m.baselines)-1 {
			if b.resync > 0 {
				v.args = append(slices.Clone(v.args), "-sync-period", b.resync.String())
			}
			then = func(e *env, p *proc, t *crTracker) error {
				s, err := b.steady(ctx, e, p, b.baselineTarget(e, t, v, m.n), m.n)
				res.Steady = append(res.Steady, s)
				return err
			}
		}
		if r, err = b.runBaseline(ctx, m.n, m.round, v, then); err != nil {
			return err
		}
		res.Cold = append(res.Cold, r)
	}
	return nil
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
