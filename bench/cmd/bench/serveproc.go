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

	"github.com/tinyctl/tinyctl/reconcile"
)

// build builds package pkg of the module at dir into out as the controller
// image's binary is built (static, trimmed, stripped, with build tags
// tags: serve's image leaves out install and uninstall with "noinstall",
// see internal/ociimage), and returns the binary's path.
func build(ctx context.Context, dir, pkg, out, tags string) (string, error) {
	bin := filepath.Join(out, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", tags, "-ldflags", "-s -w", "-o", bin, pkg)
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
	pprof           string // serve's profiling address, when asked for
	counters        counters
	exited          chan struct{}
	err             error
	logFile         *os.File
}

// counters names a controller's metrics the driver reads: reconciles
// finished and keys queued.
type counters struct {
	reconciles, depth string
	labels            []string
	// fullRechecks counts serve's full rechecks, which reconcile only what
	// they find changed ("": the resync is seen in reconciles).
	fullRechecks string
}

var (
	serveCounters             = counters{"tinyctl_reconcile_duration_seconds_count", "tinyctl_queue_depth", nil, "tinyctl_rechecks_total"}
	controllerRuntimeCounters = counters{"controller_runtime_reconcile_total", "workqueue_depth", []string{`controller="component"`}, ""}
)

// startServe starts `bin serve` against e as its ServiceAccount with extra
// flags; the clock of every "from process start" figure starts here.
func (b *bench) startServe(e *env, logPath string, extra ...string) (*proc, error) {
	if b.resync != 0 && b.resync != 10*reconcile.DefaultRecheck {
		extra = append([]string{"--recheck", (b.resync / 10).String()}, extra...)
	}
	addrs, err := freeAddrs(3)
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--kubeconfig", e.controllerKubeconfig, "--nats-url", e.nats.ClientURL(),
		"--metrics-addr", addrs[0], "--health-addr", addrs[1], "--pprof-addr", addrs[2], "--log-format", "json"}, extra...)
	p, err := startProc(logPath, b.bin, args...)
	if err != nil {
		return nil, err
	}
	p.metrics, p.health, p.pprof, p.counters = addrs[0], addrs[1], addrs[2], serveCounters
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
	return p.metric(p.counters.reconciles, p.counters.labels...)
}

// depth is how many keys wait in the process's queue.
func (p *proc) depth() (float64, error) {
	return p.metric(p.counters.depth, p.counters.labels...)
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
