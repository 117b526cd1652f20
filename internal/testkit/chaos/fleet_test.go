package chaos_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/jsm.go"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/fleet"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/localkube"
	"github.com/tinyctl/tinyctl/internal/testkit/chaos"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// The fleet scenario: a hub and three member clusters, each with its own
// NATS (a leafnode of the hub through a cuttable link, its own JetStream
// domain), its own API server and its own `tinyctl serve --hub-domain`.
// The driver writes at the hub; every check runs at every member against
// its real objects and the hub's bucket.
const (
	fleetKeys     = 20
	fleetNS       = "fleet-chaos"
	fleetConverge = 150 * time.Second // a cut link's mirror retries with up to 2 min of backoff
	// fleetLabels are every member's labels, which half the components'
	// placement selects (the other half select the members by name).
	fleetLabels = "fleet=chaos"
)

// member is one cluster of the fleet. Its controller runs as cluster
// name with labels fleetLabels, unless a fault changed them (as, its
// name now; labels, its labels now).
type member struct {
	name   string
	as     string
	labels string
	nats   *chaos.NATSServer
	link   *testenv.Proxy
	kube   *testenv.Kube
	conn   *bus.Conn
	status *status.Store
	hist   *chaos.History
	serve  *testenv.ServeProcess
	serves []*testenv.ServeProcess
}

// fleetRig is the fleet scenario's world.
type fleetRig struct {
	t       *testing.T
	ctx     context.Context
	hub     *chaos.NATSServer
	conn    *bus.Conn
	drv     *chaos.Driver
	members []*member
	fig     figures
	landed  map[string]int
	begin   time.Time
}

func TestChaosFleet(t *testing.T) {
	r := newFleetRig(t, 3)
	faults := []struct {
		name string
		run  func(r *fleetRig, m *member)
	}{
		{"link cut and healed", (*fleetRig).cutLink},
		{"delete compacted at the hub while a member was cut off", (*fleetRig).compactWhileCut},
		{"hub bucket deleted and recreated", (*fleetRig).recreateHubBucket},
		{"hub bucket restored from an older backup", (*fleetRig).restoreHubBucket},
		{"member store lost its mirror", (*fleetRig).loseMirror},
		{"hub restarted", (*fleetRig).restartHub},
		{"member left and rejoined", (*fleetRig).leaveAndRejoin},
		{"member restarted without its labels", (*fleetRig).relabel},
		{"member renamed", (*fleetRig).rename},
		{"second cluster under a member's name", (*fleetRig).duplicateName},
	}
	for cycle := range cycleCount(1, 3) {
		if cycle > 0 && outOfTime(r.begin) {
			break
		}
		for i, f := range faults {
			m := r.members[(cycle+i)%len(r.members)]
			ctx, stop := context.WithCancel(r.ctx)
			done := make(chan struct{})
			go func() { r.drv.Run(ctx, 50*time.Millisecond); close(done) }()
			f.run(r, m)
			stop()
			<-done
			r.drv.Pause(false)
			d := r.waitConverged()
			r.fig.Cycles++
			r.fig.Converge = append(r.fig.Converge, d.Round(10*time.Millisecond).Seconds())
			t.Logf("cycle %d, %s at %s: every member converged %s after", cycle, f.name, m.name, d.Round(10*time.Millisecond))
		}
	}
	for _, f := range faults {
		if r.landed[f.name] == 0 {
			t.Errorf("fault %q never landed", f.name)
		}
	}
	r.fig.note("faultsLanded", r.landed)
	r.finish()
}

func newFleetRig(t *testing.T, n int) *fleetRig {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	r := &fleetRig{t: t, ctx: ctx, fig: figures{Scenario: "fleet: hub and 3 members", Seed: seed}, landed: map[string]int{}, begin: time.Now()}
	t.Logf("seed %d", seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay: go test ./internal/testkit/chaos -run '^%s$' -chaos.seed %d", t.Name(), seed)
		}
	})
	r.hub = chaos.StartNATSWith(t, natsServer, chaos.NATSOptions{Name: "hub", Domain: "hub", Leafnodes: true})
	r.conn = natstest.BusConnect(t, bus.Config{URLs: []string{r.hub.URL()}, Name: "chaos-driver", Reconnect: natstest.FastBackoff}, nil)
	store, err := specs.Open(testenv.Ctx(t, 10*time.Second), r.conn, specs.Config{}, kv.Ensure)
	testenv.Must(t, err)
	r.drv = chaos.NewDriver(store, fleetNS, fleetKeys, seed)
	// Half the components select the members by label, half by name.
	byLabel := &api.Placement{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "chaos"}}}
	byName := &api.Placement{}
	for i := range n {
		byName.Clusters = append(byName.Clusters, fmt.Sprintf("member-%d", i))
	}
	r.drv.Placement = func(name string) *api.Placement {
		if name[len(name)-1]%2 == 0 {
			return byLabel
		}
		return byName
	}
	r.drv.Invalid = func(seq int) bool { return seq%10 == 0 } // one put in ten
	for i := range n {
		r.members = append(r.members, r.startMember(fmt.Sprintf("member-%d", i)))
	}
	for _, m := range r.members {
		r.tinyctl("fleet", "join", m.name)
	}
	r.drv.PutAll(ctx)
	r.fig.Initial = r.waitConverged().Seconds()
	return r
}

// startLeaf starts a nats-server process named name, in its own JetStream
// domain of the same name, as a leafnode of the hub through a link that
// can be cut; it keeps its status and heartbeat records to itself, as a
// member's broker does (fleet.LocalOnly).
func (r *fleetRig) startLeaf(name string) (*chaos.NATSServer, *testenv.Proxy) {
	link := testenv.StartProxy(r.t, r.hub.LeafAddr())
	return chaos.StartNATSWith(r.t, natsServer, chaos.NATSOptions{Name: name, Domain: name,
		Hub: link.Addr(), DenyExports: fleet.LocalOnly(fleet.Buckets{})}), link
}

func (r *fleetRig) startMember(name string) *member {
	t := r.t
	m := &member{name: name, as: name, labels: fleetLabels}
	m.nats, m.link = r.startLeaf(name)
	var err error
	m.kube, err = testenv.StartKube(localkube.Options{})
	testenv.Must(t, err)
	t.Cleanup(m.kube.Stop)
	_, err = m.kube.Clientset(t).CoreV1().Namespaces().Create(r.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fleetNS}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	m.conn = natstest.BusConnect(t, bus.Config{URLs: []string{m.nats.URL()}, Name: "chaos-" + name}, nil)
	m.hist = chaos.WatchDeployments(r.ctx, m.kube.Clientset(t), fleetNS, r.drv.MarkerAfter)
	r.startServe(m)
	m.status, err = status.Open(testenv.Ctx(t, 10*time.Second), m.conn, status.Config{}, kv.Existing)
	testenv.Must(t, err)
	return m
}

func (r *fleetRig) startServe(m *member) {
	args := []string{"--nats-url", m.nats.URL(), "--kubeconfig", m.kube.Kubeconfig,
		"--cluster-name", m.as, "--hub-domain", "hub", "--namespaces", fleetNS, "--lease-ttl", leaseTTL.String(),
		"--heartbeat-ttl", "3s", "--recheck", "1s", "--log-format", "json", "--stream-max-bytes", "262144"}
	if m.labels != "" {
		args = append(args, "--cluster-labels", m.labels)
	}
	m.serve = testenv.Serve(r.t, tinyctl, args...)
	m.serves = append(m.serves, m.serve)
	m.serve.WaitReady(r.t, "leader", 60*time.Second)
}

// tinyctl runs the CLI against the hub.
func (r *fleetRig) tinyctl(args ...string) string {
	r.t.Helper()
	cmd := exec.Command(tinyctl, append(args, "--nats-url", r.hub.URL(), "--nats-context", "")...)
	cmd.Env = append(os.Environ(), "HOME="+r.t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("tinyctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// converged checks I1 to I3 at every member against the hub's bucket.
func (r *fleetRig) converged() error {
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	truth, _, err := r.drv.Truth(ctx)
	if err != nil {
		return err
	}
	for _, m := range r.members {
		dyn, _ := m.kube.Dynamic(r.t)
		snap, err := chaos.Take(ctx, m.kube.Clientset(r.t), dyn, m.status, fleetNS, m.name)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		if _, err := chaos.Converged(truth, fleetNS, r.drv.Names(), nil, snap); err != nil {
			return fmt.Errorf("%s:\n%w", m.name, err)
		}
	}
	return nil
}

func (r *fleetRig) waitConverged() time.Duration {
	r.t.Helper()
	start := time.Now()
	testenv.EventuallyEvery(r.t, fleetConverge, pollEvery, r.converged)
	return time.Since(start)
}

// hold lets the driver write for d (a fault's schedule).
func (r *fleetRig) hold(d time.Duration) { hold(r.ctx, d) }

func (r *fleetRig) land(fault string, ok bool, why string) {
	if !ok {
		r.t.Errorf("fault %q did not land: %s", fault, why)
		return
	}
	r.landed[fault]++
}

func (r *fleetRig) cutLink(m *member) {
	r.hold(time.Second)
	n := m.link.Cut()
	r.land("link cut and healed", n > 0, "the cut closed no leafnode connection")
	r.hold(5 * time.Second)
	m.link.Restore()
	r.hold(time.Second)
}

// compactWhileCut cuts m off, lets the driver write (a quarter of its
// writes are deletes), purges every delete marker at the hub (nats kv
// compact), and heals the link: the deletes m missed must still land.
func (r *fleetRig) compactWhileCut(m *member) {
	m.link.Cut()
	r.hold(3 * time.Second)
	r.drv.Pause(true)
	_, b := r.hubKV()
	// The driver's writes are random, and a later put can undo each
	// delete: while no key's latest entry is a delete marker, it writes
	// on, a second at a time, so that the compaction has one to purge.
	before := r.markers()
	for deadline := time.Now().Add(30 * time.Second); before == 0 && time.Now().Before(deadline); before = r.markers() {
		r.drv.Pause(false)
		r.hold(time.Second)
		r.drv.Pause(true)
	}
	testenv.Must(r.t, b.PurgeDeletes(r.ctx, jetstream.DeleteMarkersOlderThan(-1)))
	r.land("delete compacted at the hub while a member was cut off", before > 0 && r.markers() == 0,
		fmt.Sprintf("%d delete markers before compaction, %d after", before, r.markers()))
	m.link.Restore()
}

// markers counts the keys whose latest entry at the hub is a delete marker.
func (r *fleetRig) markers() int {
	store, err := specs.Open(testenv.Ctx(r.t, 10*time.Second), r.conn, specs.Config{}, kv.Existing)
	testenv.Must(r.t, err)
	n := 0
	for _, name := range r.drv.Names() {
		if e, err := store.Latest(r.ctx, api.Key(fleetNS, name)); err == nil && e.Op != kv.OpPut {
			n++
		}
	}
	return n
}

func (r *fleetRig) hubKV() (jetstream.JetStream, jetstream.KeyValue) {
	js := r.conn.JetStream()
	b, err := js.KeyValue(r.ctx, specs.DefaultBucket)
	testenv.Must(r.t, err)
	return js, b
}

// recreateHubBucket deletes the hub's spec bucket and creates it again,
// empty, with the driver paused: every member keeps its children as
// reported orphans, then converges on what the new bucket gets.
func (r *fleetRig) recreateHubBucket(_ *member) {
	r.hold(time.Second)
	r.drv.Pause(true)
	r.waitConverged()
	uids := map[string]map[string]types.UID{}
	for _, m := range r.members {
		uids[m.name] = r.deploymentUIDs(m)
	}
	js, _ := r.hubKV()
	testenv.Must(r.t, js.DeleteKeyValue(r.ctx, specs.DefaultBucket))
	store, err := specs.Open(testenv.Ctx(r.t, 10*time.Second), r.conn, specs.Config{}, kv.Ensure)
	testenv.Must(r.t, err)
	r.drv.SetStore(store)
	for _, m := range r.members {
		m.hist.Reset()
	}
	orphans := 0
	for _, m := range r.members {
		testenv.EventuallyEvery(r.t, fleetConverge, pollEvery, func() error { return r.orphansReported(m, uids[m.name]) })
		for name, uid := range uids[m.name] {
			if now := r.deploymentUIDs(m)[name]; now != uid {
				r.t.Errorf("%s: Deployment %s deleted or replaced after the hub's bucket was recreated (uid %s -> %q)", m.name, name, uid, now)
			}
		}
		orphans += len(uids[m.name])
	}
	r.land("hub bucket deleted and recreated", orphans > 0, "no member had a Deployment to orphan")
	r.drv.Pause(false)
	r.hold(2 * time.Second)
}

// restoreHubBucket backs the hub's spec bucket up (nats stream backup),
// lets the driver write on, and restores the backup in its place: the
// bucket goes back to older revisions, and every member must follow it
// (keys written after the backup kept as orphans, nothing deleted).
func (r *fleetRig) restoreHubBucket(_ *member) {
	const stream = "KV_" + specs.DefaultBucket
	mgr, err := jsm.New(r.conn.NATS())
	testenv.Must(r.t, err)
	s, err := mgr.LoadStream(stream)
	testenv.Must(r.t, err)
	dir := r.t.TempDir()
	_, err = s.SnapshotToDirectory(testenv.Ctx(r.t, 30*time.Second), dir)
	testenv.Must(r.t, err)
	r.hold(3 * time.Second)
	r.drv.Pause(true)
	r.waitConverged() // what the members applied before the restore is all in
	js, _ := r.hubKV()
	before, err := js.Stream(r.ctx, stream)
	testenv.Must(r.t, err)
	testenv.Must(r.t, js.DeleteKeyValue(r.ctx, specs.DefaultBucket))
	for _, m := range r.members {
		m.hist.Reset() // the restored bucket's revisions are older: another epoch
	}
	_, state, err := mgr.RestoreSnapshotFromDirectory(testenv.Ctx(r.t, 30*time.Second), stream, dir)
	testenv.Must(r.t, err)
	r.land("hub bucket restored from an older backup", state.LastSeq < before.CachedInfo().State.LastSeq && state.Msgs > 0,
		fmt.Sprintf("restored up to revision %d (%d messages), the bucket had %d", state.LastSeq, state.Msgs, before.CachedInfo().State.LastSeq))
	store, err := specs.Open(testenv.Ctx(r.t, 10*time.Second), r.conn, specs.Config{}, kv.Existing)
	testenv.Must(r.t, err)
	r.drv.SetStore(store)
}

func (r *fleetRig) deploymentUIDs(m *member) map[string]types.UID {
	return deploymentUIDs(r.t, r.ctx, m.kube.Clientset(r.t), fleetNS)
}

func (r *fleetRig) orphansReported(m *member, uids map[string]types.UID) error {
	return orphansReported(r.ctx, m.status, m.name, fleetNS, uids)
}

// loseMirror SIGKILLs m's controller, deletes its mirror of the spec
// bucket (a store that lost it) and starts a controller again, which
// copies the hub's bucket from its first revision.
func (r *fleetRig) loseMirror(m *member) {
	r.hold(time.Second)
	r.kill(m)
	err := m.conn.JetStream().DeleteStream(r.ctx, "KV_"+specs.DefaultBucket)
	r.land("member store lost its mirror", err == nil, fmt.Sprint(err))
	r.startServe(m)
	r.hold(time.Second)
}

// restartHub SIGKILLs the hub's server (clients and leafnodes lose it)
// and starts it again on the same store and ports.
func (r *fleetRig) restartHub(_ *member) {
	r.hold(time.Second)
	starts := r.hub.Starts
	killed := r.hub.Kill(r.t)
	r.hold(2 * time.Second)
	r.hub.Start(r.t)
	r.land("hub restarted", killed && r.hub.Starts == starts+1, "the hub was not killed and started again")
	r.hold(time.Second)
}

// leaveAndRejoin removes m from the hub's membership and adds it again:
// its rows at the hub resume.
func (r *fleetRig) leaveAndRejoin(m *member) {
	r.hold(time.Second)
	r.tinyctl("fleet", "leave", m.name)
	gathered := r.tinyctl("clusters")
	r.tinyctl("fleet", "join", m.name)
	r.land("member left and rejoined", !strings.Contains(gathered, "domain "+m.name), "the member was still gathered after leaving:\n"+gathered)
	r.hold(time.Second)
}

// relabel restarts m's controller without its labels (an install re-run
// without --cluster-labels) while the driver writes: the placement no
// longer selects it, only because its identity changed, so it must keep
// every child (held, reported UnplaceHeld) until its labels are back.
func (r *fleetRig) relabel(m *member) {
	r.restartAs(m, m.name, "", "member restarted without its labels")
}

// rename restarts m's controller under another cluster name while the
// driver writes: it finds children without a status record of its own
// and must keep them all (held) until its name is back.
func (r *fleetRig) rename(m *member) {
	r.restartAs(m, m.name+"-renamed", fleetLabels, "member renamed")
}

// restartAs runs m's controller as cluster as with labels for a few
// seconds of writes, checks that it held the unplaces (no delete, which
// the watch checks, and UnplaceHeld reported under the name it ran as),
// and gives it its identity back.
func (r *fleetRig) restartAs(m *member, as, labels, fault string) {
	r.hold(time.Second)
	r.kill(m)
	m.as, m.labels = as, labels
	r.startServe(m)
	var held int
	testenv.EventuallyEvery(r.t, 60*time.Second, pollEvery, func() (err error) {
		held, err = r.held(m, as)
		if err == nil && held == 0 {
			err = fmt.Errorf("%s running as %s (labels %q) holds nothing yet", m.name, as, labels)
		}
		return err
	})
	r.hold(3 * time.Second)
	r.land(fault, held > 0, "no unplace held")
	r.kill(m)
	m.as, m.labels = m.name, fleetLabels
	r.startServe(m)
}

// duplicateName starts a second Kubernetes cluster (its own API server,
// and its own NATS as a leaf of the hub) whose controller runs under m's
// name, as an install with copied values would, while the driver writes:
// its fleet join must be refused, its controller must report the conflict
// (tinyctl_cluster_name_conflict 1, the fault's positive control), and m
// must report none and keep converging (checked after the fault).
func (r *fleetRig) duplicateName(m *member) {
	t := r.t
	r.hold(time.Second)
	domain := m.name + "-dup"
	nc, _ := r.startLeaf(domain)
	defer nc.Kill(t)
	kube, err := testenv.StartKube(localkube.Options{})
	testenv.Must(t, err)
	defer kube.Stop()
	_, err = kube.Clientset(t).CoreV1().Namespaces().Create(r.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fleetNS}}, metav1.CreateOptions{})
	testenv.Must(t, err)

	cmd := exec.Command(tinyctl, "fleet", "join", m.name, "--domain", domain, "--nats-url", r.hub.URL(), "--nats-context", "")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	refused := err != nil && strings.Contains(string(out), "two clusters cannot share a name")
	if !refused {
		t.Errorf("fleet join %s from domain %s: %v\n%s\nwant it refused", m.name, domain, err, out)
	}
	dup := testenv.Serve(t, tinyctl, "--nats-url", nc.URL(), "--kubeconfig", kube.Kubeconfig, "--cluster-name", m.name,
		"--cluster-labels", fleetLabels, "--hub-domain", "hub", "--namespaces", fleetNS, "--lease-ttl", leaseTTL.String(),
		"--heartbeat-ttl", "3s", "--recheck", "1s", "--log-format", "json", "--stream-max-bytes", "262144")
	defer func() {
		_ = dup.Cmd.Process.Kill()
		<-dup.Exited()
	}()
	dup.WaitReady(t, "leader", 60*time.Second)
	conflict := func(p *testenv.ServeProcess, want string) error {
		_, body, err := testenv.HTTPGet(p.MetricsAddr, "/metrics")
		if err == nil && !strings.Contains(body, "\ntinyctl_cluster_name_conflict "+want+"\n") {
			err = fmt.Errorf("tinyctl_cluster_name_conflict is not %s", want)
		}
		return err
	}
	testenv.EventuallyEvery(t, 30*time.Second, pollEvery, func() error { return conflict(dup, "1") })
	if err := conflict(m.serve, "0"); err != nil {
		t.Errorf("%s, whose name a second cluster took, reports: %v", m.name, err)
	}
	r.land("second cluster under a member's name", refused && conflict(dup, "1") == nil, "the join was not refused or the conflict not reported")
}

// held counts the status records of cluster in m's bucket that report a
// held unplace.
func (r *fleetRig) held(m *member, cluster string) (int, error) {
	recs, err := m.status.ListCluster(r.ctx, cluster)
	n := 0
	for _, rec := range recs {
		if rec.Err == nil && slices.ContainsFunc(rec.Status.Conditions, func(c api.Condition) bool { return c.Reason == "UnplaceHeld" }) {
			n++
		}
	}
	return n, err
}

func (r *fleetRig) kill(m *member) {
	testenv.Must(r.t, m.serve.Cmd.Process.Signal(syscall.SIGKILL))
	<-m.serve.Exited()
}

// finish checks the invariants over the whole run at every member, logs
// the figures and appends them to -chaos.report.
func (r *fleetRig) finish() {
	t := r.t
	truth, lost, err := r.drv.Truth(testenv.Ctx(t, 10*time.Second))
	testenv.Must(t, err)
	r.fig.Lost = len(lost)
	for _, l := range lost {
		t.Errorf("I1 lost write at the hub: %s", l)
	}
	for _, m := range r.members {
		dyn, _ := m.kube.Dynamic(t)
		snap, err := chaos.Take(testenv.Ctx(t, 10*time.Second), m.kube.Clientset(t), dyn, m.status, fleetNS, m.name)
		testenv.Must(t, err)
		compared, err := chaos.Converged(truth, fleetNS, r.drv.Names(), nil, snap)
		if err != nil {
			t.Errorf("%s: I1-I3 not converged at the end:\n%v", m.name, err)
		}
		r.fig.ContentCompared += compared
		if compared == 0 {
			t.Errorf("%s: I1 compared no live key's content", m.name)
		}
		for _, v := range chaos.Security(snap) {
			r.fig.Insecure++
			t.Errorf("%s: I7: %s", m.name, v)
		}
		r.fig.watched(t, m.name, m.hist)
	}
	c := r.drv.Counts()
	r.fig.Puts, r.fig.Deletes, r.fig.Unacked = c.Puts, c.Deletes, c.Unacked
	for _, w := range truth {
		if w.Live() {
			r.fig.LiveKeys++
		}
	}
	r.fig.write(t)
}
