package jscluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/natscluster"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// The fault schedule: kills one node at a time, round-robin, each after
// every node is healthy again and at least killGap after the last
// restart; a killed node stays down for downFor.
const (
	kills   = 6
	killGap = 2 * time.Second
	downFor = 2 * time.Second
	// churnKeys are the components put and deleted at random.
	churnKeys = 20
	cluster   = "test"
)

// killRecord is what one kill measured.
type killRecord struct {
	node string
	// acked is the time from the kill to the bucket acknowledging a put
	// of component "probe" (retried while it times out).
	acked time.Duration
	// probe is the time from a put made right after the kill (while the
	// node is down) to its status reporting that revision Ready.
	probe time.Duration
	// healthy is the time from the restart to the node's /healthz 200
	// (JetStream caught up).
	healthy time.Duration
}

// TestComponentsConvergeWhileJetStreamNodesAreKilled runs tinyctl on a
// 3-node JetStream cluster with --replicas 3 and, while components are put
// and deleted at random and jobs are published to three of them, SIGKILLs
// one node after another and restarts it, then all three at once, then
// cuts one node off from the others (a follower of the spec bucket, then
// its leader) for longer than the lease TTL and heals it. At the end every key must show
// its last acknowledged revision in its Deployment and status record, no
// deleted component may have come back, a leader must be ready, and every
// acknowledged job must be in its stream.
func TestComponentsConvergeWhileJetStreamNodesAreKilled(t *testing.T) {
	nc := natscluster.Start(t, natscluster.BuildServer(t), 3)
	ns := kube.Namespace(t, nil)
	ctrls := []*testenv.ServeProcess{startServe(t, nc, ns, "a"), startServe(t, nc, ns, "b")}
	waitOneLeader(t, ctrls, 60*time.Second)

	conn := natstest.BusConnect(t, bus.Config{URLs: nc.URLs()}, nil)
	ctx := testenv.Ctx(t, 3*time.Minute)
	specStore, err := specs.Open(ctx, conn, specs.Config{}, kv.Existing)
	testenv.Must(t, err)
	statuses, err := status.Open(ctx, conn, status.Config{}, kv.Existing)
	testenv.Must(t, err)

	led := newLedger()
	queues := []string{"q0", "q1", "q2"}
	for _, q := range append([]string{"probe"}, queues...) {
		_, err := put(ctx, specStore, led, ns, q, 0)
		testenv.Must(t, err)
	}
	for _, q := range queues {
		waitObserved(t, statuses, ns, q, led.state(api.Key(ns, q)).rev, 60*time.Second)
	}
	resurrected := watchResurrections(t, ns, led)

	names := make([]string, churnKeys)
	for i := range names {
		names[i] = fmt.Sprintf("c%02d", i)
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	churnDone := make(chan struct{})
	go func() { churn(loadCtx, specStore, led, ns, names, 150*time.Millisecond); close(churnDone) }()
	type jobResult struct {
		sent map[string]int
		err  error
	}
	jobsDone := make(chan jobResult, 1)
	go func() {
		subjects := make([]string, len(queues))
		for i, q := range queues {
			subjects[i] = ns + "." + q
		}
		sent, err := jobs(loadCtx, conn.JetStream(), subjects, 50*time.Millisecond)
		jobsDone <- jobResult{sent, err}
	}()

	start := time.Now()
	records := faults(t, nc, ctrls, specStore, statuses, led, ns)
	stopLoad()
	<-churnDone
	jr := <-jobsDone
	testenv.Must(t, jr.err)
	run := time.Since(start)

	converged := time.Now()
	keys := append(append([]string{"probe"}, queues...), names...)
	checkConverged(t, specStore, statuses, led, ns, keys, 60*time.Second)
	convergeTime := time.Since(converged)
	waitOneLeader(t, ctrls, 30*time.Second)
	checkJobs(t, conn, ns, jr.sent)
	checkReplicas(t, conn, ns, queues)

	puts, dels, failed := led.counts()
	if n := resurrected(); n != 0 {
		t.Errorf("%d deleted components came back", n)
	}
	t.Logf("run %s: %d faults, %d puts and %d deletes acknowledged, %d writes failed (retried as new writes), %d jobs acknowledged; lost 0, resurrected %d; converged %s after the load stopped; lease acquisitions %v",
		run.Round(time.Second), len(records), puts, dels, failed, sum(jr.sent), resurrected(),
		convergeTime.Round(10*time.Millisecond), leaseAcquisitions(t, ctrls))
	for i, r := range records {
		t.Logf("fault %d: node %s; a put made right after the fault acknowledged in %s, Ready in %s; healthy %s after the restart or heal",
			i+1, r.node, r.acked.Round(10*time.Millisecond), r.probe.Round(10*time.Millisecond), r.healthy.Round(10*time.Millisecond))
	}
}

// startServe runs a controller for namespace ns on every node of nc, with
// three replicas and a short lease.
func startServe(t *testing.T, nc *natscluster.Cluster, ns, holder string) *testenv.ServeProcess {
	return testenv.Serve(t, binary, "--nats-url", strings.Join(nc.URLs(), ","), "--kubeconfig", kube.Kubeconfig,
		"--holder", holder, "--cluster-name", cluster, "--namespaces", ns, "--replicas", "3",
		"--lease-ttl", "10s", "--heartbeat-ttl", "5s", "--recheck", "2s", "--log-format", "json")
}

// faults kills and restarts the nodes of nc on the schedule above, then
// partitions the cluster twice. After each fault it puts component
// "probe" and times its reconcile.
func faults(t *testing.T, nc *natscluster.Cluster, ctrls []*testenv.ServeProcess, s *specs.Store, st *status.Store, led *ledger, ns string) []killRecord {
	t.Helper()
	var records []killRecord
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	for i := range kills {
		for _, nd := range nc.Nodes {
			testenv.Eventually(t, 60*time.Second, nd.Healthy)
		}
		for time.Since(last) < killGap {
			<-tick.C
		}
		nd := nc.Nodes[i%len(nc.Nodes)]
		killed := time.Now()
		nd.Kill(t)
		rec := killRecord{node: nd.Name}
		rev := putUntilAcked(t, s, led, ns, "probe", 1000+i)
		rec.acked = time.Since(killed)
		waitObserved(t, st, ns, "probe", rev, 60*time.Second)
		rec.probe = time.Since(killed)
		for time.Since(killed) < downFor {
			<-tick.C
		}
		nd.Start(t)
		restarted := time.Now()
		testenv.Eventually(t, 60*time.Second, nd.Healthy)
		rec.healthy = time.Since(restarted)
		last = time.Now()
		records = append(records, rec)
	}
	records = append(records, killAll(t, nc, s, st, led, ns))
	return append(records, partition(t, nc, ctrls, st, led, ns, controllerServer, 3000), partition(t, nc, ctrls, st, led, ns, specLeader, 3001))
}

// killAll SIGKILLs every node at once (a power cut), starts them all
// again, and times a put made once the cluster answers.
func killAll(t *testing.T, nc *natscluster.Cluster, s *specs.Store, st *status.Store, led *ledger, ns string) killRecord {
	t.Helper()
	for _, nd := range nc.Nodes {
		testenv.Eventually(t, 60*time.Second, nd.Healthy)
	}
	killed := time.Now()
	for _, nd := range nc.Nodes {
		nd.Kill(t)
	}
	for _, nd := range nc.Nodes {
		if nd.Running() {
			t.Fatalf("node %s still runs after SIGKILL: the fault did not land", nd.Name)
		}
	}
	for _, nd := range nc.Nodes {
		nd.Start(t)
	}
	rec := killRecord{node: "all"}
	rev := putUntilAcked(t, s, led, ns, "probe", 2000)
	rec.acked = time.Since(killed)
	waitObserved(t, st, ns, "probe", rev, 60*time.Second)
	rec.probe = time.Since(killed)
	for _, nd := range nc.Nodes {
		testenv.Eventually(t, 60*time.Second, nd.Healthy)
	}
	rec.healthy = time.Since(killed)
	return rec
}

// putUntilAcked puts name's spec number n until the bucket acknowledges it
// (a put may time out while the bucket elects a leader).
func putUntilAcked(t *testing.T, s *specs.Store, led *ledger, ns, name string, n int) uint64 {
	t.Helper()
	var rev uint64
	testenv.Eventually(t, 60*time.Second, func() error {
		var err error
		rev, err = put(context.Background(), s, led, ns, name, n)
		return err
	})
	return rev
}

// waitObserved polls name's status record until it reports revision rev
// Ready, and returns how long that took.
func waitObserved(t *testing.T, st *status.Store, ns, name string, rev uint64, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	testenv.Eventually(t, within, func() error {
		return observed(st, api.Key(ns, name), rev)
	})
	return time.Since(start)
}

// observed returns nil when key's status in this cluster reports rev Ready.
func observed(st *status.Store, key string, rev uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r, err := st.Get(ctx, key, cluster)
	if err != nil {
		return fmt.Errorf("status of %s: %w", key, err)
	}
	ready := slices.ContainsFunc(r.Conditions, func(c api.Condition) bool {
		return c.Type == api.ConditionApplied && c.Status == api.ConditionTrue
	})
	if r.ObservedRevision != rev || !ready {
		return fmt.Errorf("status of %s: revision %d ready=%t (%s), want %d ready", key, r.ObservedRevision, ready, r.Error, rev)
	}
	return nil
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
