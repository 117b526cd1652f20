package serve_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// metric returns the sum of the samples of a counter whose line matches re.
func metric(t *testing.T, addr string, re *regexp.Regexp) float64 {
	t.Helper()
	code, body, err := get(addr, "/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("/metrics: %d %v", code, err)
	}
	var sum float64
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		sum += v
	}
	return sum
}

func TestReadyzAndMetricsFollowTheLoop(t *testing.T) {
	f := newFixture(t)
	f.nats.Shutdown() // the controller starts while NATS is away
	a := startServe(t, f.nats.URL(), f.ns, "a")
	testenv.Eventually(t, 10*time.Second, func() error {
		code, body, err := get(a.health, "/healthz")
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("/healthz = %d %q %v", code, body, err)
		}
		return nil
	})
	if code, body, _ := get(a.health, "/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before NATS is up = %d %q, want 503", code, body)
	}
	f.nats.Restart(t)
	a.waitRole("leader", 30*time.Second)

	created := regexp.MustCompile(`(?m)^tinyctl_applies_total\{kind="Deployment",result="created"\} (\S+)$`)
	before := metric(t, a.metric, created)
	f.publish("metered", img+"1")
	f.waitImage("metered", img+"1")
	testenv.Eventually(t, 10*time.Second, func() error {
		if after := metric(t, a.metric, created); after != before+1 {
			return fmt.Errorf("Deployment created counter %v -> %v, want +1", before, after)
		}
		return nil
	})
	names := []string{"tinyctl_reconcile_duration_seconds_count", "tinyctl_leader 1", "tinyctl_nats_connected 1",
		"tinyctl_queue_depth", "tinyctl_kv_watch_lag_revisions"}
	testenv.Eventually(t, 10*time.Second, func() error {
		_, body, err := get(a.metric, "/metrics")
		if err != nil {
			return err
		}
		for _, name := range names {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name)).MatchString(body) {
				return fmt.Errorf("/metrics has no %q", name)
			}
		}
		return nil
	})
	// The component's apply was timed step by step.
	for _, step := range []string{"guard", "jetstream", "kubernetes", "status"} {
		count := regexp.MustCompile(`(?m)^tinyctl_reconcile_step_duration_seconds_count\{step="` + step + `"\} (\S+)$`)
		if n := metric(t, a.metric, count); n < 1 {
			t.Errorf("step %s timed %v times, want at least once", step, n)
		}
	}
}
