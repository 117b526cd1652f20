package serve_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// waitMetric polls /metrics until the sum of the samples matching re is
// want.
func (p *proc) waitMetric(re string, want float64) {
	p.t.Helper()
	pattern := regexp.MustCompile(`(?m)^` + re + ` (\S+)$`)
	testenv.Eventually(p.t, 15*time.Second, func() error {
		if got := metric(p.t, p.metric, pattern); got != want {
			return fmt.Errorf("%s = %v, want %v", re, got, want)
		}
		return nil
	})
}

// TestHealthSeriesFollowTheCluster checks the series the alerts watch: a
// component that fails for good counts as stalled until a good revision
// arrives, winning the lease counts once per win, and a cluster whose
// status records outlive its heartbeat is stale while this one is live.
func TestHealthSeriesFollowTheCluster(t *testing.T) {
	f := newFixture(t)
	a := startServe(t, f.nats.URL(), f.ns, "a")
	a.waitRole("leader", 30*time.Second)
	a.waitMetric(`tinyctl_lease_acquisitions_total`, 1)
	a.waitMetric(`tinyctl_components_stalled`, 0)
	a.waitMetric(`tinyctl_reconcile_retries_total\{class="waiting"\}`, 0) // exported before any retry

	// A value that decodes but does not validate (a bare '>' subject).
	bad := fmt.Sprintf(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"bad","namespace":%q},`+
		`"spec":{"image":"%s1","jobs":{"subjects":[">"]}}}`, f.ns, img)
	if _, err := f.specs.Put(context.Background(), api.Key(f.ns, "bad"), []byte(bad)); err != nil {
		t.Fatal(err)
	}
	a.waitMetric(`tinyctl_components_stalled`, 1)
	f.publish("bad", img+"2") // a good revision
	f.waitImage("bad", img+"2")
	a.waitMetric(`tinyctl_components_stalled`, 0)

	// Cluster "gone" reported a status once and never beat again.
	conn, err := bus.Connect(context.Background(), bus.Config{URLs: []string{f.nats.URL()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	st, err := status.Open(context.Background(), conn, status.Config{}, kv.Ensure)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(context.Background(), api.Status{Component: api.Key(f.ns, "bad"), Cluster: "gone"}); err != nil {
		t.Fatal(err)
	}
	a.waitMetric(`tinyctl_cluster_stale\{cluster="gone"\}`, 1)
	a.waitMetric(`tinyctl_cluster_stale\{cluster="test"\}`, 0)

	// A standby that takes over counts its own win.
	b := startServe(t, f.nats.URL(), f.ns, "b")
	b.waitRole("standby", 30*time.Second)
	b.waitMetric(`tinyctl_lease_acquisitions_total`, 0)
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	b.waitRole("leader", 15*time.Second)
	b.waitMetric(`tinyctl_lease_acquisitions_total`, 1)
}
