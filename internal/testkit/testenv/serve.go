package testenv

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/localkube"
)

// ServeProcess is one `tinyctl serve` process started by Serve.
type ServeProcess struct {
	// HealthAddr and MetricsAddr are the loopback addresses of its
	// /healthz and /readyz, and /metrics servers.
	HealthAddr, MetricsAddr string
	// Cmd is the running command; signal it through Cmd.Process.
	Cmd *exec.Cmd

	out    *SyncBuffer
	exited chan struct{}
	err    error
}

// Serve starts `binary serve args...` with its health and metrics servers
// on free loopback ports (do not pass --health-addr or --metrics-addr)
// and a fresh HOME (serve reads no `nats` CLI context). The process is killed when the
// parent dies and when the test ends; its output is logged if the test
// failed. It fails the test if the process cannot start.
func Serve(tb testing.TB, binary string, args ...string) *ServeProcess {
	tb.Helper()
	p := &ServeProcess{HealthAddr: FreeAddr(tb), MetricsAddr: FreeAddr(tb), out: &SyncBuffer{}, exited: make(chan struct{})}
	all := append([]string{"serve", "--health-addr", p.HealthAddr, "--metrics-addr", p.MetricsAddr}, args...)
	p.Cmd = exec.Command(binary, all...)
	p.Cmd.Env = append(os.Environ(), "HOME="+tb.TempDir())
	p.Cmd.Stdout, p.Cmd.Stderr = p.out, p.out
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.Cmd.Start(); err != nil {
		tb.Fatalf("start tinyctl serve: %v", err)
	}
	go func() {
		p.err = p.Cmd.Wait()
		close(p.exited)
	}()
	tb.Cleanup(func() {
		_ = p.Cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot die
		_ = p.Cmd.Process.Kill()
		<-p.exited
		NoSecrets(tb, "tinyctl serve's output", p.Output())
		if tb.Failed() {
			tb.Logf("tinyctl %s output:\n%s", strings.Join(all, " "), p.Output())
		}
	})
	return p
}

// Output returns what the process has printed so far (stdout and stderr).
func (p *ServeProcess) Output() string { return p.out.String() }

// Exited returns a channel closed once the process has exited.
func (p *ServeProcess) Exited() <-chan struct{} { return p.exited }

// ExitErr returns how the process exited (nil: status 0), once Exited is
// closed.
func (p *ServeProcess) ExitErr() error {
	<-p.exited
	return p.err
}

// Get fetches path (such as "/readyz") from the health server, or from
// the metrics server for "/metrics". It returns the status code and body,
// or the request's error.
func (p *ServeProcess) Get(path string) (int, string, error) {
	addr := p.HealthAddr
	if path == "/metrics" {
		addr = p.MetricsAddr
	}
	return HTTPGet(addr, path)
}

// WaitReady polls /readyz until it answers 200 with a body naming role
// ("leader" or "standby"), and fails the test after within.
func (p *ServeProcess) WaitReady(tb testing.TB, role string, within time.Duration) {
	tb.Helper()
	Eventually(tb, within, func() error {
		code, body, err := p.Get("/readyz")
		if err != nil {
			return err
		}
		if code != http.StatusOK || !strings.Contains(body, role) {
			return fmt.Errorf("/readyz = %d %q, want ready (%s)", code, strings.TrimSpace(body), role)
		}
		return nil
	})
}

// HTTPGet fetches http://addr/path with a one-second timeout and returns
// the status code and body.
func HTTPGet(addr, path string) (int, string, error) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// FreeAddr returns a loopback host:port that was free a moment ago and
// that no other FreeAddr of this test binary returned (localkube.FreePorts
// picks it outside the kernel's ephemeral range, so a listener on port 0
// elsewhere cannot take it before the caller binds it).
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	ports, err := localkube.FreePorts(1)
	if err != nil {
		tb.Fatalf("free address: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
}

// SyncBuffer is a bytes.Buffer safe for concurrent writes, such as a
// running process's output or a timer goroutine's.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
