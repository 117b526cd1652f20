package chaos_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/chaos"
	"github.com/tinyctl/tinyctl/internal/localkube"
	"github.com/tinyctl/tinyctl/internal/testenv"
)

var (
	full     = flag.Bool("chaos.full", false, "run every scenario with many fault cycles (go tool task chaos)")
	cycles   = flag.Int("chaos.cycles", 0, "fault cycles per scenario (0: 1, or 6 with -chaos.full)")
	duration = flag.Duration("chaos.duration", 50*time.Minute, "with -chaos.full: stop starting new cycles once this much time has passed")
	report   = flag.String("chaos.report", "", "append each scenario's figures to this file as a JSON line")
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
	if natsServer, err = chaos.BuildNATSServer(dir); err != nil {
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

// cycleCount is how many fault cycles a scenario runs: reduced in the
// normal test run, more with -chaos.full.
func cycleCount(reduced, fullRun int) int {
	switch {
	case *cycles > 0:
		return *cycles
	case *full:
		return fullRun
	}
	return reduced
}

// outOfTime reports whether a full run has used its -chaos.duration, so
// no new cycle should start.
func outOfTime() bool { return *full && time.Since(started) > *duration }

// fullOnly skips a scenario outside the full set, saying how to run it.
func fullOnly(t *testing.T) {
	t.Helper()
	if !*full {
		t.Skip("in the full chaos set only: go tool task chaos (or -chaos.full)")
	}
}
