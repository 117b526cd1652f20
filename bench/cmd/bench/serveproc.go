package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// build builds package pkg of the module at dir into out, as `go tool task
// build` does (static, trimmed), and returns the binary's path.
func build(ctx context.Context, dir, pkg, out string) (string, error) {
	bin := filepath.Join(out, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, pkg)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	return bin, nil
}

// proc is one child process under measurement (`tinyctl serve` or the
// controller-runtime baseline), logging to a file; metrics and health are
// serve's loopback addresses.
type proc struct {
	cmd             *exec.Cmd
	started         time.Time
	metrics, health string
	exited          chan struct{}
	err             error
	logFile         *os.File
}

// startServe starts `bin serve` against e with extra flags; the clock of
// every "from process start" figure starts here.
func startServe(bin string, e *env, logPath string, extra ...string) (*proc, error) {
	addrs, err := freeAddrs(2)
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--kubeconfig", e.cp.Kubeconfig, "--nats-url", e.nats.ClientURL(),
		"--metrics-addr", addrs[0], "--health-addr", addrs[1], "--log-format", "json"}, extra...)
	p, err := startProc(logPath, bin, args...)
	if err != nil {
		return nil, err
	}
	p.metrics, p.health = addrs[0], addrs[1]
	return p, nil
}

// startProc starts bin with args, its output to logPath.
func startProc(logPath, bin string, args ...string) (*proc, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: exec.Command(bin, args...), exited: make(chan struct{}), logFile: log}
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.Env = cleanEnv()
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	go func() {
		p.err = p.cmd.Wait()
		log.Close()
		close(p.exited)
	}()
	return p, nil
}

// cleanEnv is the driver's environment without TINYCTL_* and KUBECONFIG,
// so only the flags configure serve.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TINYCTL_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			out = append(out, kv)
		}
	}
	return out
}

// stop sends SIGTERM and waits for the exit (SIGKILL after a minute).
func (p *proc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%s did not stop within a minute of SIGTERM", filepath.Base(p.cmd.Path))
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) && !ee.Exited() {
		return nil // ended by the signal before its handler ran
	}
	return p.err
}

// alive returns an error once the process has exited.
func (p *proc) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited: %v (log: %s)", filepath.Base(p.cmd.Path), p.err, p.logFile.Name())
	default:
		return nil
	}
}

// ready reports whether /readyz answers 200 as the leader: a standby is
// ready as soon as it is connected to NATS, before it reconciles anything.
func (p *proc) ready() bool {
	resp, err := httpClient.Get("http://" + p.health + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(body), "ready (leader)")
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

// metric sums every series of the named metric on /metrics whose labels
// contain all of labels (e.g. `result="success"`).
func (p *proc) metric(name string, labels ...string) (float64, error) {
	resp, err := httpClient.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok || !hasAll(series, labels) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return 0, fmt.Errorf("metric %q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

func hasAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// reconciles is how many reconciles the process has finished, any result.
func (p *proc) reconciles() (float64, error) {
	return p.metric("tinyctl_reconcile_duration_seconds_count")
}

// freeAddrs returns n free loopback host:port addresses.
func freeAddrs(n int) ([]string, error) {
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		out = append(out, l.Addr().String())
		defer l.Close()
	}
	return out, nil
}
