package fleet_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/fleet"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// leafController starts cluster name's NATS as a leaf of hub and its
// controller, a `tinyctl serve` process managing only namespace ns of kube,
// and returns the leaf.
func leafController(t *testing.T, hub *bus.Embedded, kube *testenv.Kube, name, ns, labels string) *bus.Embedded {
	t.Helper()
	leaf, err := bus.StartEmbedded(testenv.Ctx(t, 20*time.Second), bus.EmbeddedConfig{ServerName: name,
		JetStreamDomain: name, Port: -1, StoreDir: t.TempDir(),
		LeafRemotes: []bus.LeafRemote{{URLs: []string{hub.LeafnodeURL()}, LocalOnly: fleet.LocalOnly(fleet.Buckets{})}}})
	testenv.Must(t, err)
	t.Cleanup(func() { _ = leaf.Shutdown(context.Background()) })
	testenv.Serve(t, binary, "--nats-url", leaf.ClientURL(), "--kubeconfig", kube.Kubeconfig, "--hub-domain", "hub",
		"--cluster-name", name, "--cluster-labels", labels, "--namespaces", ns)
	return leaf
}

// TestTwentyClustersEachGetTheirComponentsAndTheHubSeesAll fans 100
// components out by label selector to 20 clusters, each with its own NATS
// (a leaf of the hub) and controller (a `tinyctl serve` process); the
// controllers share one API server, each managing its own namespace, since
// no component is placed on two.
func TestTwentyClustersEachGetTheirComponentsAndTheHubSeesAll(t *testing.T) {
	const clusters, components = 20, 100
	// Twenty controllers and their NATS servers on two cores, beside other
	// packages' tests: the deadlines are for liveness, not speed, and the
	// controllers keep their shipped lease and heartbeat TTLs (a 2 s lease
	// starved of CPU changes hands and redoes work).
	ctx := testenv.Ctx(t, 10*time.Minute)
	hub := startHub(t)
	hubConn := natstest.BusConnect(t, bus.Config{URLs: []string{hub.ClientURL()}}, nil)
	hubClient, err := client.New(ctx, hubConn.NATS(), client.Config{Create: true})
	testenv.Must(t, err)
	revs := map[string]uint64{}
	cs := kubes[1].Clientset(t)
	leaves := make([]*bus.Embedded, clusters)
	for i := range clusters {
		name, ns := "edge-"+strconv.Itoa(i), "fan-"+strconv.Itoa(i)
		createNamespace(t, cs, ns)
		leaves[i] = leafController(t, hub, kubes[1], name, ns, "site="+strconv.Itoa(i))
		testenv.Must(t, hubClient.Join(ctx, name, ""))
	}
	t.Cleanup(func() {
		if t.Failed() {
			reportMissing(t, hubClient, leaves, revs)
		}
	})

	for j := range components {
		i := strconv.Itoa(j % clusters)
		c := api.Component{APIVersion: api.APIVersion, Kind: api.Kind,
			Metadata: api.Metadata{Name: "c-" + strconv.Itoa(j), Namespace: "fan-" + i},
			Spec: api.Spec{Image: "ghcr.io/acme/edge:1",
				Jobs:      api.Jobs{Subjects: []string{"fan-" + i + ".c" + strconv.Itoa(j)}},
				Placement: &api.Placement{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"site": i}}}}}
		res, err := hubClient.Publish(ctx, c, client.PublishOptions{})
		testenv.Must(t, err)
		revs[res.Key] = res.Revision
	}

	testenv.Eventually(t, 6*time.Minute, func() error {
		snap, err := hubClient.Snapshot(ctx)
		if err != nil {
			return err
		}
		ready := 0
		for _, r := range snap.Statuses {
			ns, _, _ := strings.Cut(r.Component, ".")
			if want := "edge-" + strings.TrimPrefix(ns, "fan-"); r.Cluster != want {
				t.Fatalf("the hub has a status of %s from %s; only %s selects it", r.Component, r.Cluster, want)
			}
			if c, ok := r.Condition(api.ConditionApplied); ok && c.Status == api.ConditionTrue && r.ObservedRevision == revs[r.Component] {
				ready++
			}
		}
		if len(snap.Statuses) != components || ready != components {
			return fmt.Errorf("the hub has %d status records, %d ready at the published revision; want %d", len(snap.Statuses), ready, components)
		}
		return nil
	})
	for i := range clusters {
		list, err := cs.AppsV1().Deployments("fan-"+strconv.Itoa(i)).List(ctx, metav1.ListOptions{})
		testenv.Must(t, err)
		if len(list.Items) != components/clusters {
			t.Errorf("namespace fan-%d has %d Deployments, want %d", i, len(list.Items), components/clusters)
		}
	}
}

// reportMissing logs, for each component whose status the hub lacks or
// holds at another revision, what its cluster's own status bucket says:
// whether the record was lost on the way to the hub or never written.
func reportMissing(t *testing.T, hub *client.Client, leaves []*bus.Embedded, revs map[string]uint64) {
	ctx := testenv.Ctx(t, 30*time.Second)
	snap, err := hub.Snapshot(ctx)
	if err != nil {
		t.Logf("hub snapshot: %v", err)
		return
	}
	at := map[string]uint64{}
	for _, r := range snap.Statuses {
		at[r.Component] = r.ObservedRevision
	}
	members, _ := hub.Members(ctx)
	t.Logf("hub members: %+v", members)
	for key, rev := range revs {
		if at[key] == rev {
			continue
		}
		ns, _, _ := strings.Cut(key, ".")
		i, _ := strconv.Atoi(strings.TrimPrefix(ns, "fan-"))
		conn := natstest.BusConnect(t, bus.Config{URLs: []string{leaves[i].ClientURL()}}, nil)
		local, err := client.New(ctx, conn.NATS(), client.Config{})
		if err != nil {
			t.Logf("%s: the hub has revision %d, want %d; edge-%d: %v", key, at[key], rev, i, err)
			continue
		}
		lsnap, err := local.Snapshot(ctx)
		found := "no record"
		for _, r := range lsnap.Statuses {
			if r.Component == key {
				found = fmt.Sprintf("revision %d, conditions %+v", r.ObservedRevision, r.Conditions)
			}
		}
		t.Logf("%s: the hub has revision %d, want %d; edge-%d's own status bucket: %s (%v)", key, at[key], rev, i, found, err)
	}
}
