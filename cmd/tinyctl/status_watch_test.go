package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// running is a tinyctl command left running in the background.
type running struct {
	t           *testing.T
	cmd         *exec.Cmd
	out, errOut *testenv.SyncBuffer
	done        chan struct{}
}

// start runs tinyctl with args in the background; it is killed when the
// test ends.
func (u *user) start(args ...string) *running {
	u.t.Helper()
	r := &running{t: u.t, out: &testenv.SyncBuffer{}, errOut: &testenv.SyncBuffer{}, done: make(chan struct{})}
	r.cmd = exec.Command(binary, args...)
	r.cmd.Env = append([]string{"HOME=" + u.home, "PATH=" + os.Getenv("PATH")}, u.env...)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.errOut
	if err := r.cmd.Start(); err != nil {
		u.t.Fatal(err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.done)
	}()
	u.t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	return r
}

// interrupt sends SIGINT, as Ctrl-C does, and returns what the command
// printed and its exit code once it has exited.
func (r *running) interrupt(within time.Duration) result {
	r.t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		r.t.Fatal(err)
	}
	select {
	case <-r.done:
	case <-time.After(within):
		r.t.Fatalf("tinyctl did not exit within %s of SIGINT", within)
	}
	return result{code: r.cmd.ProcessState.ExitCode(), stdout: r.out.String(), stderr: r.errOut.String()}
}

// renders splits the output of `status --watch` (off a terminal) into its
// tables, each as rows without the AGE column.
func renders(out string) [][]string {
	var tables [][]string
	for _, block := range strings.Split(strings.TrimSpace(out), "\n\n") {
		tables = append(tables, tableRows(block, statusAge))
	}
	return tables
}

// waitRender waits until some table (last: the latest one) has row.
func (r *running) waitRender(row string, last bool, within time.Duration) {
	r.t.Helper()
	testenv.Eventually(r.t, within, func() error {
		tables := renders(r.out.String())
		if last {
			tables = tables[len(tables)-1:]
		}
		for _, tbl := range tables {
			for _, got := range tbl {
				if got == row {
					return nil
				}
			}
		}
		return fmt.Errorf("no row %q yet; output so far:\n%s\nstderr:\n%s", row, r.out.String(), r.errOut.String())
	})
}

func TestStatusWatchPrintsEveryChangeUntilInterrupted(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	f := u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0"))
	u.must("apply", "-f", f) // revision 1

	w := u.start("status", "-n", "media", "--watch")
	w.waitRender("media resizer - Unknown NotReconciled -/1 -", true, 10*time.Second)

	s := u.statuses()
	beat(t, s, "east", 2*time.Second)
	report(t, s, ready("media.resizer", "east", 1, "True", "Reconciled"))
	w.waitRender("media resizer east True Reconciled 1/1 live", false, 10*time.Second)
	// Nothing is written any more: the heartbeat expires by the clock and
	// the watch says so by itself.
	w.waitRender("media resizer east True Reconciled 1/1 stale", true, 10*time.Second)

	u.file("c.yaml", component("media", "resizer", "acme/resizer:1.1.0"))
	u.must("apply", "-f", f) // revision 2
	w.waitRender("media resizer east True Reconciled 1/2 stale", true, 10*time.Second)

	r := w.interrupt(10 * time.Second)
	if r.code != 0 || r.stderr != "" {
		t.Errorf("after Ctrl-C: want exit 0 and nothing on stderr\n%s", r)
	}
	for i, tbl := range renders(r.stdout) {
		if tbl[0] != "NAMESPACE NAME CLUSTER READY REASON REVISION HEARTBEAT" {
			t.Errorf("render %d has no header:\n%s", i, strings.Join(tbl, "\n"))
		}
	}
	if n := len(renders(r.stdout)); n > 6 {
		t.Errorf("%d renders for 4 changes (heartbeat renewals must not print):\n%s", n, r.stdout)
	}
}
