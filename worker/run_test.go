package worker_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/worker"
)

// TestRunServesMetricsFromTheEnvironment runs a worker as a main would:
// configured only by the environment, metrics listener included.
func TestRunServesMetricsFromTheEnvironment(t *testing.T) {
	q := newQueue(t, 30*time.Second)
	addr := testenv.FreeAddr(t)
	for k, v := range map[string]string{"NATS_URL": q.s.URL(), "TINYCTL_STREAM": testStream,
		"TINYCTL_CONSUMER": testConsumer, worker.EnvMetricsAddr: addr} {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, func(context.Context, *worker.Job) error { return nil }) }()
	q.publish(t, "one", nil)
	testenv.Eventually(t, 10*time.Second, func() error {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if want := `tinyctl_worker_jobs_total{outcome="ack"} 1`; !strings.Contains(string(b), want) {
			return fmt.Errorf("/metrics lacks %s", want)
		}
		return nil
	})
	cancel()
	select {
	case err := <-done:
		testenv.Must(t, err)
	case <-time.After(30 * time.Second):
		// No handler runs, so Run owes at most a pull's wait (2s) and a
		// flush; 30s leaves room for a loaded CI machine (10s did not).
		t.Fatal("Run did not return within 30s of its context ending")
	}
	if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		t.Error("the metrics listener still answers after Run returned")
	}
}

// TestRunServesProbesFromTheEnvironment: with TINYCTL_HEALTH_ADDR set (as
// the Deployment sets it for spec.probes.worker), Run serves /healthz and
// /readyz; while its NATS server is away the worker is alive but not
// ready, and ready again once it reconnects.
func TestRunServesProbesFromTheEnvironment(t *testing.T) {
	q := newQueue(t, 30*time.Second)
	addr := testenv.FreeAddr(t)
	for k, v := range map[string]string{"NATS_URL": q.s.URL(), "TINYCTL_STREAM": testStream,
		"TINYCTL_CONSUMER": testConsumer, "TINYCTL_HEALTH_ADDR": addr} {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, func(context.Context, *worker.Job) error { return nil }) }()
	probe := func(path string, want int) func() error {
		return func() error {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != want {
				b, _ := io.ReadAll(resp.Body)
				return fmt.Errorf("%s: %d %s, want %d", path, resp.StatusCode, strings.TrimSpace(string(b)), want)
			}
			return nil
		}
	}
	testenv.Eventually(t, 10*time.Second, probe("/readyz", http.StatusOK))
	testenv.Eventually(t, time.Second, probe("/healthz", http.StatusOK))

	q.s.Shutdown()
	testenv.Eventually(t, 10*time.Second, probe("/readyz", http.StatusServiceUnavailable))
	testenv.Eventually(t, time.Second, probe("/healthz", http.StatusOK)) // reconnecting: alive
	q.s.Restart(t)
	testenv.Eventually(t, 20*time.Second, probe("/readyz", http.StatusOK))

	cancel()
	select {
	case err := <-done:
		testenv.Must(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of its context ending")
	}
	if err := probe("/healthz", http.StatusOK)(); err == nil {
		t.Error("the health listener still answers after Run returned")
	}
}
