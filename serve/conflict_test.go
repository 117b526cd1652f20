package serve_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestAnotherClusterUnderTheSameNameIsReported: while a controller of
// another Kubernetes cluster (another cluster ID) beats under this
// cluster's name on the same NATS, the controller says so in its own
// heartbeat and its metric, and stops saying so once the other is gone.
func TestAnotherClusterUnderTheSameNameIsReported(t *testing.T) {
	f := newFixture(t)
	a := startServe(t, f.nats.URL(), f.ns, "a")
	a.waitRole("leader", 30*time.Second)
	a.waitMetric(`tinyctl_cluster_name_conflict`, 0)

	conn, err := bus.Connect(context.Background(), bus.Config{URLs: []string{f.nats.URL()}}, nil)
	testenv.Must(t, err)
	t.Cleanup(conn.Close)
	st, err := status.Open(context.Background(), conn, status.Config{}, kv.Existing)
	testenv.Must(t, err)
	var own string
	testenv.Eventually(t, 10*time.Second, func() error {
		hb, err := st.Heartbeat(context.Background(), "test")
		if err != nil || hb.ClusterID == "" || hb.Conflict != "" {
			return fmt.Errorf("heartbeat %+v (%v): want a cluster ID and no conflict", hb.Heartbeat, err)
		}
		own = hb.ClusterID
		return nil
	})

	const other = "0123456789ab"
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- st.RunHeartbeat(ctx, status.HeartbeatOptions{
			Heartbeat: cluster.Heartbeat{Cluster: "test", ClusterID: other, Controller: "elsewhere-0"},
			Interval:  time.Second, TTL: 3 * time.Second,
		})
	}()
	a.waitMetric(`tinyctl_cluster_name_conflict`, 1)
	testenv.Eventually(t, 10*time.Second, func() error {
		hb, err := st.Heartbeat(context.Background(), "test")
		if err != nil || hb.ClusterID != own || !strings.Contains(hb.Conflict, other) {
			return fmt.Errorf("heartbeat %+v (%v): want this controller's, naming cluster %s", hb.Heartbeat, err, other)
		}
		return nil
	})
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the other cluster's heartbeat stopped with %v", err)
	}
	a.waitMetric(`tinyctl_cluster_name_conflict`, 0)
}
