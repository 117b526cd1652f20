package fleet_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/fleet"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/localkube"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
	"github.com/tinyctl/tinyctl/serve"
)

// BenchmarkHubPutToReadyEverywhere measures, for N leaf clusters each with
// its own NATS (a leafnode of the hub), API server (one etcd shared under
// per-cluster prefixes) and controller, the time from a put at the hub to
// the hub's status showing every cluster Ready at that revision: mirror,
// watch, reconcile, status write, sourcing back. It reports p50 and p99
// over the puts (run with -benchtime=Nx for N puts).
//
//	go test ./internal/testkit/e2e/fleet -run '^$' -bench HubPutToReady -benchtime 40x
func BenchmarkHubPutToReadyEverywhere(b *testing.B) {
	for _, n := range []int{10, 50} {
		b.Run("leaves="+strconv.Itoa(n), func(b *testing.B) { benchFleet(b, n) })
	}
}

func benchFleet(b *testing.B, n int) {
	ctx := context.Background()
	hub := startHub(b)
	hubConn := natstest.BusConnect(b, bus.Config{URLs: []string{hub.ClientURL()}}, nil)
	hubClient, err := client.New(ctx, hubConn.NATS(), client.Config{Create: true})
	testenv.Must(b, err)
	for i := range n {
		name := "leaf-" + strconv.Itoa(i)
		benchLeaf(b, hub, name)
		testenv.Must(b, hubClient.Join(ctx, name, ""))
	}
	comp := api.Component{APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: "edge-agent", Namespace: "bench"},
		Spec:     api.Spec{Image: "ghcr.io/acme/agent:0", Jobs: api.Jobs{Subjects: []string{"bench.agent"}}}}
	put := func(i int) uint64 {
		comp.Spec.Image = "ghcr.io/acme/agent:" + strconv.Itoa(i)
		res, err := hubClient.Publish(ctx, comp, client.PublishOptions{})
		testenv.Must(b, err)
		return res.Revision
	}
	waitEverywhere(b, hubClient, n, put(0)) // warm: namespaces, streams, informers
	var took []time.Duration
	b.ResetTimer()
	for i := 1; b.Loop(); i++ {
		start := time.Now()
		waitEverywhere(b, hubClient, n, put(i))
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[(len(took)*99)/100].Milliseconds()), "p99-ms")
	fmt.Fprintf(os.Stderr, "leaves=%d puts=%d p50=%s p99=%s max=%s\n", n, len(took),
		took[len(took)/2], took[(len(took)*99)/100], took[len(took)-1])
}

// benchLeaf starts a cluster: its NATS as a leaf of hub, an API server on
// the shared etcd, and its controller in this process.
func benchLeaf(b *testing.B, hub *bus.Embedded, name string) {
	leaf, err := bus.StartEmbedded(context.Background(), bus.EmbeddedConfig{ServerName: name,
		JetStreamDomain: name, Port: -1, StoreDir: b.TempDir(),
		LeafRemotes: []bus.LeafRemote{{URLs: []string{hub.LeafnodeURL()}, LocalOnly: fleet.LocalOnly(fleet.Buckets{})}}})
	testenv.Must(b, err)
	b.Cleanup(func() { _ = leaf.Shutdown(context.Background()) })
	cp, err := localkube.Start(context.Background(), localkube.Options{EtcdOf: kubes[0].ControlPlane})
	testenv.Must(b, err)
	b.Cleanup(cp.Stop)
	ctrl, err := serve.New(serve.Config{
		NATS: bus.Config{URLs: []string{leaf.ClientURL()}}, Kubeconfig: cp.Kubeconfig, HubDomain: "hub",
		Loop:        reconcile.Config{Cluster: render.Cluster{Name: name}, CreateNamespaces: true},
		MetricsAddr: "-", HealthAddr: "-", Holder: name,
	})
	testenv.Must(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(zerolog.Nop().WithContext(ctx)) }()
	b.Cleanup(func() {
		cancel()
		<-done
	})
	testenv.Must(b, ctrl.WaitReady(ctx, true))
}

// waitEverywhere polls the hub's status until n clusters report the
// component Ready at rev.
func waitEverywhere(b *testing.B, c *client.Client, n int, rev uint64) {
	deadline := time.Now().Add(2 * time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		snap, err := c.Snapshot(context.Background())
		testenv.Must(b, err)
		ready := 0
		for _, r := range snap.Statuses {
			if cond, ok := r.Condition(api.ConditionApplied); ok && cond.Status == api.ConditionTrue && r.ObservedRevision == rev {
				ready++
			}
		}
		if ready == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d clusters ready at revision %d after 2m", ready, n, rev)
		}
	}
}
