package chaos_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/localkube"
	"github.com/tinyctl/tinyctl/internal/testkit/natscluster"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

var (
	full     = flag.Bool("chaos.full", false, "run every scenario with many fault cycles (go tool task chaos)")
	cycles   = flag.Int("chaos.cycles", 0, "fault cycles per scenario (0: 1 or 2; with -chaos.full, as many as -chaos.duration allows)")
	duration = flag.Duration("chaos.duration", 50*time.Minute, "with -chaos.full: how long all scenarios together may run (each gets an equal share)")
	report   = flag.String("chaos.report", "", "append each scenario's figures to this file as a JSON line")
	seedFlag = flag.Uint64("chaos.seed", 0, "seed of the driver's writes and the API proxy's faults (0: from the clock; a failing run prints its seed)")
)

var (
	kube       *testenv.Kube
	tinyctl    string
	natsServer string
	started    = time.Now()
)

// TestMain builds tinyctl and nats-server once and starts one API server
// (with its audit log) for every scenario.
func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	bin, cleanup, err := testenv.BuildTinyctl()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	tinyctl = bin
	dir, err := os.MkdirTemp("", "chaos-nats-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if natsServer, err = natscluster.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	k, err := testenv.StartKube(localkube.Options{AuditLog: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer k.Stop()
	kube = k
	return m.Run()
}

// scenarios is how many scenarios share -chaos.duration.
const scenarios = 14

// cycleCount is how many fault cycles a scenario runs: reduced in the
// normal test run; with -chaos.full, at least fullRun and then as many as
// its share of -chaos.duration allows (see outOfTime); -chaos.cycles fixes
// the number.
func cycleCount(reduced, fullRun int) int {
	switch {
	case *cycles > 0:
		return *cycles
	case *full:
		return max(fullRun, 1000)
	}
	return reduced
}

// outOfTime reports whether a full run should start no new cycle of a
// scenario that began at begin: it has used its share of -chaos.duration,
// or the whole run has used all of it.
func outOfTime(begin time.Time) bool {
	if !*full || *cycles > 0 {
		return false
	}
	return time.Since(begin) > *duration/scenarios || time.Since(started) > *duration
}
