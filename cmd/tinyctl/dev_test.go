package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestDevRunsEverythingAndLeavesNothingBehind runs `tinyctl dev` from the
// repository's root as the README says, checks that the examples become
// Deployments in its API server, that tinyctl reaches its NATS and that the
// thumbnailer's local worker (its dev.tinyctl.io/run annotation) processes
// a published job, then presses Ctrl-C.
func TestDevRunsEverythingAndLeavesNothingBehind(t *testing.T) {
	cmd, lines := startDev(t, "--nats-port", "-1",
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
		"--examples", "examples")
	out := readUntil(t, lines, "export TINYCTL_NATS_URL=", 3*time.Minute)
	kubeconfig := valueAfter(out, "export KUBECONFIG=")
	natsURL := valueAfter(out, "export TINYCTL_NATS_URL=")
	stateDir := filepath.Dir(kubeconfig)
	later, collected := collect(lines)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("dev output:\n%s%s", out, later)
		}
	})
	workerPID := checkLocalWorkers(t, out, natsURL)

	cs := clientFor(t, kubeconfig)
	for _, d := range []string{"billing/billing-exporter", "docs/pdf-extractor", "media/thumbnailer",
		"notifications/webhook-sender"} {
		ns, name, _ := strings.Cut(d, "/")
		testenv.Eventually(t, 30*time.Second, func() error {
			_, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
			return err
		})
	}
	// search-indexer selects clusters labelled env=prod; dev is env=dev.
	if _, err := cs.AppsV1().Deployments("search").Get(context.Background(), "search-indexer", metav1.GetOptions{}); err == nil {
		t.Error("search-indexer runs in dev mode although its placement selects env=prod")
	}
	list := exec.Command(binary, "list", "-A", "--nats-url", natsURL, "--nats-context", "")
	list.Env = cmd.Env
	if b, err := list.CombinedOutput(); err != nil || !strings.Contains(string(b), "pdf-extractor") {
		t.Fatalf("tinyctl list against dev NATS: %v\n%s", err, b)
	}

	interrupt(t, cmd, collected)
	if !strings.Contains(later.String(), "media/thumbnailer | ") || !strings.Contains(later.String(), `"drained"`) {
		t.Errorf("the local worker did not drain on Ctrl-C; output after ready:\n%s", later)
	}
	if err := syscall.Kill(-workerPID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the local worker's process group %d is still there after Ctrl-C (kill -0: %v)", workerPID, err)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("control plane state %s left behind (%v)", stateDir, err)
	}
	if _, err := cs.Discovery().ServerVersion(); err == nil {
		t.Error("the dev API server still answers after Ctrl-C")
	}
}

// TestDevOnPortZeroPrintsTheAddressesItGot runs dev with the controller's
// listeners on port 0 (the issue: it hung at "starting the controller")
// and checks that it prints the ports the kernel chose and that they
// answer /readyz and /metrics.
func TestDevOnPortZeroPrintsTheAddressesItGot(t *testing.T) {
	cmd, lines := startDev(t, "--nats-port", "-1", "--examples", "",
		"--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0")
	out := readUntil(t, lines, "controller health: ", 3*time.Minute)
	m := regexp.MustCompile(`controller health: (http://\S+/readyz)\s+metrics: (http://\S+/metrics)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no controller addresses in:\n%s", out)
	}
	for _, u := range m[1:] {
		if strings.Contains(u, ":0/") {
			t.Errorf("dev printed %s, not the port it listens on", u)
		}
	}
	if body := get(t, m[1]); !strings.HasPrefix(body, "ready") {
		t.Errorf("GET %s = %q, want ready", m[1], body)
	}
	if body := get(t, m[2]); !strings.Contains(body, "tinyctl_") {
		t.Errorf("GET %s has no tinyctl_ metric:\n%.300s", m[2], body)
	}
	_, collected := collect(lines)
	interrupt(t, cmd, collected)
}

// get fetches url and fails the test unless it answers 200.
func get(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, b)
	}
	return string(b)
}

// startDev starts `tinyctl dev args...` in the repository's root and returns it with its output
// (stdout and stderr) line by line. Cleanup kills it if the test did not
// stop it.
func startDev(t *testing.T, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"dev"}, args...)...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = os.Environ()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines
}

// collect keeps reading lines into a buffer, or the dev process would block
// on its output; the channel closes when the process closed its output.
func collect(lines <-chan string) (*testenv.SyncBuffer, <-chan struct{}) {
	buf := &testenv.SyncBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for l := range lines {
			fmt.Fprintln(buf, l)
		}
	}()
	return buf, done
}

// interrupt presses Ctrl-C and wants dev to exit 0 once collected is
// closed.
func interrupt(t *testing.T, cmd *exec.Cmd, collected <-chan struct{}) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-collected // the process closed its output
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dev exited with %v after Ctrl-C, want 0", err)
	}
}

// readUntil collects output lines until one contains marker.
func readUntil(t *testing.T, lines <-chan string, marker string, within time.Duration) string {
	t.Helper()
	var b strings.Builder
	deadline := time.After(within)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended before %q:\n%s", marker, b.String())
			}
			fmt.Fprintln(&b, l)
			if strings.Contains(l, marker) {
				return b.String()
			}
		case <-deadline:
			t.Fatalf("no %q within %s:\n%s", marker, within, b.String())
		}
	}
}

func valueAfter(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok {
			return v
		}
	}
	return ""
}

func clientFor(t *testing.T, kubeconfig string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig %q: %v", kubeconfig, err)
	}
	cfg.Timeout = 2 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
