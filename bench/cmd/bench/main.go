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
	bin, out   string
	crBin      string // the controller-runtime baseline; "" when not measured
	log        io.Writer
	workers    int
	timeout    time.Duration
	idleFor    time.Duration
	burstPuts  int
	interval   time.Duration
	latencyFor time.Duration
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

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
	steadyN := fs.Int("steady", 1000, "count (one of -n) at which to measure idle, no-op, burst, latency and restarts (0: none)")
	repo := fs.String("repo", "", "tinyctl source tree to build serve from (default: the one above this directory)")
	fs.StringVar(&b.out, "out", "out", "directory for results.json, results.md, the chart and serve's logs")
	fs.DurationVar(&b.timeout, "timeout", 30*time.Minute, "longest a convergence may take")
	fs.DurationVar(&b.idleFor, "idle", time.Minute, "idle window for CPU and RSS")
	fs.IntVar(&b.burstPuts, "burst", 1000, "puts to one key in the coalescing burst")
	fs.DurationVar(&b.interval, "interval", 100*time.Millisecond, "time between puts in the latency run")
	fs.DurationVar(&b.latencyFor, "latency", 30*time.Second, "length of the latency run")
	baseline := fs.Bool("baseline", true, "measure the controller-runtime baseline (cmd/crbaseline) too, at every count up to -compare-max")
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
	if *steadyN != 0 && !slices.Contains(counts, *steadyN) {
		return fmt.Errorf("-steady %d is not one of -n %s", *steadyN, *ns)
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
	if b.bin, err = build(ctx, *repo, "./cmd/tinyctl", tmp); err != nil {
		return err
	}
	if *baseline {
		if b.crBin, err = build(ctx, filepath.Join(*repo, "bench"), "./cmd/crbaseline", tmp); err != nil {
			return err
		}
	}
	var compare []string
	if *limited != "" {
		compare = strings.Split(*limited, ",")
	}
	res := results{Machine: machine(), Workers: b.workers, Started: time.Now()}
	for round := 1; round <= *rounds; round++ {
		for _, n := range counts {
			cmp, cr := compare, b.crBin != ""
			if n > *compareMax {
				cmp, cr = nil, false
			}
			if err := b.measure(ctx, n, round, *steadyN == n && round == 1, cmp, cr, &res); err != nil {
				return err
			}
		}
	}
	return res.write(b.out, os.Stdout)
}

// measure runs the floor, serve with its defaults (then the steady-state
// measurements, when asked), serve with the comparison flags and the
// controller-runtime baseline, for n.
func (b *bench) measure(ctx context.Context, n, round int, steady bool, compare []string, baseline bool, res *results) error {
	r, err := b.runFloor(ctx, n, round)
	if err != nil {
		return err
	}
	res.Cold = append(res.Cold, r)
	var then func(*env, *proc, *tracker) error
	if steady {
		then = func(e *env, p *proc, t *tracker) error {
			s, err := b.steady(ctx, e, p, t, n)
			res.Steady = append(res.Steady, s)
			return err
		}
	}
	if r, err = b.runCold(ctx, n, round, nil, then); err != nil {
		return err
	}
	res.Cold = append(res.Cold, r)
	if compare != nil {
		if r, err = b.runCold(ctx, n, round, compare, nil); err != nil {
			return err
		}
		res.Cold = append(res.Cold, r)
	}
	if baseline {
		if r, err = b.runBaseline(ctx, n, round); err != nil {
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
