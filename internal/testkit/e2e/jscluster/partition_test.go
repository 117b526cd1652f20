package jscluster_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/natscluster"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// partitionFor is how long a node stays cut off: longer than the
// controllers' lease TTL (10 s) plus a heartbeat interval, so a controller
// connected to the cut-off node must have moved or lost its lease.
const partitionFor = 20 * time.Second

// What a partition cuts off from the other two nodes.
type cutOff int

const (
	// controllerServer is the node the leading controller is connected
	// to: it must move to a server of the majority (its client stays
	// connected to the cut-off one, which answers no JetStream request)
	// or hand the lease to the standby.
	controllerServer cutOff = iota
	// specLeader is the spec bucket's stream leader: the majority must
	// elect another while writes go on.
	specLeader
)

func (c cutOff) String() string {
	return map[cutOff]string{controllerServer: "the leading controller's server", specLeader: "the spec bucket's leader"}[c]
}

// partition cuts one node off from the other two while the load runs and
// confirms the cut landed (the node has no route left). It puts component
// "probe" through a client of the majority side until acknowledged and
// times it Ready, then heals the partition once partitionFor has passed
// and waits until every node is healthy.
func partition(t *testing.T, nc *natscluster.Cluster, ctrls []*testenv.ServeProcess, st *status.Store, led *ledger, ns string, what cutOff, n int) killRecord {
	t.Helper()
	for _, nd := range nc.Nodes {
		testenv.Eventually(t, 60*time.Second, nd.Healthy)
	}
	var i int
	var leader *testenv.ServeProcess
	switch what {
	case controllerServer:
		i, leader = leaderServer(t, nc, ctrls)
	case specLeader:
		i = streamLeader(t, nc)
	}
	logged := 0
	if leader != nil {
		logged = len(leader.Output())
	}
	nd := nc.Nodes[i]
	// The probe's client reaches only the majority; its buckets are bound
	// before the cut (binding reads the stream's info, which waits for an
	// election).
	majority := slices.Delete(slices.Clone(nc.URLs()), i, i+1)
	conn := natstest.BusConnect(t, bus.Config{URLs: majority}, nil)
	defer conn.Close()
	probe, err := specs.Open(testenv.Ctx(t, 30*time.Second), conn, specs.Config{}, kv.Existing)
	testenv.Must(t, err)
	majorityStatus, err := status.Open(testenv.Ctx(t, 30*time.Second), conn, status.Config{}, kv.Existing)
	testenv.Must(t, err)
	cut := time.Now()
	if closed := nc.Isolate(i); closed == 0 {
		t.Fatalf("isolating %s closed no route connection: the partition did not land", nd.Name)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if r, err := nd.Routes(); err != nil || r != 0 {
			return fmt.Errorf("%s still has %d routes (%v): the partition did not land", nd.Name, r, err)
		}
		return nil
	})
	rec := killRecord{node: fmt.Sprintf("%s cut off (%s)", nd.Name, what)}
	rev := putUntilAcked(t, probe, led, ns, "probe", n)
	rec.acked = time.Since(cut)
	waitObserved(t, majorityStatus, ns, "probe", rev, 60*time.Second)
	rec.probe = time.Since(cut)
	hold(partitionFor - time.Since(cut))
	if leader != nil && !strings.Contains(leader.Output()[logged:], "reconnecting to another") {
		t.Errorf("the controller connected to %s while it was cut off never moved to another server", nd.Name)
	}
	nc.Heal(i)
	healed := time.Now()
	for _, nd := range nc.Nodes {
		testenv.Eventually(t, 60*time.Second, nd.Healthy)
	}
	rec.healthy = time.Since(healed)
	return rec
}

// leaderServer returns the index of the node the leading controller is
// connected to, and that controller.
func leaderServer(t *testing.T, nc *natscluster.Cluster, ctrls []*testenv.ServeProcess) (int, *testenv.ServeProcess) {
	t.Helper()
	at := -1
	var leader *testenv.ServeProcess
	testenv.Eventually(t, 30*time.Second, func() error {
		holder := ""
		for k, c := range ctrls {
			if _, body, err := c.Get("/readyz"); err == nil && strings.Contains(body, "leader") {
				holder, leader = string(rune('a'+k)), c // startServe's holders, in ctrls' order
			}
		}
		if holder == "" {
			return errors.New("no controller leads")
		}
		for j, nd := range nc.Nodes {
			names, err := nd.Clients()
			if err != nil {
				return err
			}
			if slices.Contains(names, "tinyctl-serve/"+holder) {
				at = j
				return nil
			}
		}
		return fmt.Errorf("no node holds the connection of leader %s", holder)
	})
	return at, leader
}

// streamLeader returns the index of the node leading the spec bucket's
// stream.
func streamLeader(t *testing.T, nc *natscluster.Cluster) int {
	t.Helper()
	conn := natstest.BusConnect(t, bus.Config{URLs: nc.URLs()}, nil)
	defer conn.Close()
	var at int
	testenv.Eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s, err := conn.JetStream().Stream(ctx, "KV_"+specs.DefaultBucket)
		if err != nil {
			return err
		}
		info := s.CachedInfo()
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return fmt.Errorf("stream %s has no leader", info.Config.Name)
		}
		at = slices.IndexFunc(nc.Nodes, func(nd *natscluster.Node) bool { return nd.Name == info.Cluster.Leader })
		if at < 0 {
			return fmt.Errorf("leader %s is no node of the cluster", info.Cluster.Leader)
		}
		return nil
	})
	return at
}

// hold waits d (a fault's schedule, not a wait for a condition).
func hold(d time.Duration) {
	if d > 0 {
		<-time.After(d)
	}
}
