package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/chaos"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

const (
	keys        = 50
	cluster     = "chaos"
	leaseTTL    = 3 * time.Second
	writeEvery  = 20 * time.Millisecond // the driver's pace: 50 writes a second
	convergeMax = 90 * time.Second
	pollEvery   = 250 * time.Millisecond
)

// rigOptions shape a scenario's set-up.
type rigOptions struct {
	maxStore  int64             // JetStream store limit (0: 1 TiB)
	link      bool              // the controller reaches NATS through a cuttable proxy
	direct    bool              // with link, the standby reaches NATS directly
	faulty    float64           // share of API writes failed by a proxy
	proxied   bool              // the controllers reach the API server through that proxy even when faulty is 0
	standby   bool              // run a second controller
	scaled    func(string) bool // components with a ScaledObject
	serveArgs []string
}

// rig is one scenario's world: a nats-server process, controllers, a
// namespace, the driver writing specs and the watch recording revisions.
type rig struct {
	t      *testing.T
	ctx    context.Context
	opts   rigOptions
	nats   *chaos.NATSServer
	link   *testenv.Proxy
	api    *chaos.FaultyAPI
	ns     string
	conn   *bus.Conn
	specs  *specs.Store
	status *status.Store
	drv    *chaos.Driver
	hist   *chaos.History
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	serves []*serveProc
	leader *serveProc
	before map[string]chaos.StreamState
	fig    figures
	begin  time.Time
	seed   uint64
}

type serveProc struct {
	*testenv.ServeProcess
	holder string
}

// newRig starts everything, puts every key once, waits until all converge,
// publishes jobs to ten components and reads the streams as they are.
func newRig(t *testing.T, scenario string, o rigOptions) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := &rig{t: t, ctx: ctx, opts: o, ns: kube.RestrictedNamespace(t), fig: figures{Scenario: scenario}, begin: time.Now(), seed: *seedFlag}
	if r.seed == 0 {
		r.seed = uint64(time.Now().UnixNano())
	}
	r.fig.Seed = r.seed
	t.Logf("seed %d", r.seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay: go test ./internal/testkit/chaos -run '^%s$' -chaos.seed %d (the faults run on the same schedule; timing still varies)", t.Name(), r.seed)
		}
	})
	r.cs = kube.Clientset(t)
	r.dyn, _ = kube.Dynamic(t)
	r.nats = chaos.StartNATS(t, natsServer, o.maxStore)
	if o.link {
		r.link = testenv.StartProxy(t, r.nats.Addr())
	}
	if o.faulty > 0 || o.proxied {
		r.api = chaos.StartFaultyAPI(t, kube.Config, o.faulty, r.seed)
	}
	kube.InstallFence(t) // as the chart does
	r.conn = natstest.BusConnect(t, bus.Config{URLs: []string{r.nats.URL()}, Name: "chaos-driver", Reconnect: natstest.FastBackoff}, nil)
	var err error
	r.specs, err = specs.Open(testenv.Ctx(t, 10*time.Second), r.conn, specs.Config{}, kv.Ensure)
	testenv.Must(t, err)
	r.drv = chaos.NewDriver(r.specs, r.ns, keys, r.seed)
	r.drv.Scaled = o.scaled
	r.hist = chaos.WatchDeployments(ctx, r.cs, r.ns, r.drv.MarkerAfter)
	r.leader = r.startServe()
	r.leader.WaitReady(t, "leader", 60*time.Second)
	if o.standby {
		r.startServe().WaitReady(t, "standby", 30*time.Second)
	}
	r.status, err = status.Open(testenv.Ctx(t, 10*time.Second), r.conn, status.Config{}, kv.Existing)
	testenv.Must(t, err)
	r.drv.PutAll(ctx)
	r.fig.Initial = r.waitConverged().Seconds()
	r.publishJobs(10)
	r.before = r.streams()
	return r
}

// startServe starts one more controller and remembers it.
func (r *rig) startServe() *serveProc {
	r.t.Helper()
	natsURL, kubeconfig := r.nats.URL(), kube.Kubeconfig
	if r.link != nil && !(r.opts.direct && len(r.serves) > 0) {
		natsURL = "nats://" + r.link.Addr()
	}
	if r.api != nil {
		kubeconfig = r.api.Kubeconfig(r.t)
	}
	holder := fmt.Sprintf("chaos-%d", len(r.serves))
	args := append([]string{"--nats-url", natsURL, "--kubeconfig", kubeconfig, "--holder", holder,
		"--cluster-name", cluster, "--namespaces", r.ns, "--lease-ttl", leaseTTL.String(), "--heartbeat-ttl", "3s",
		"--recheck", "1s", "--shutdown-grace", "2s", "--request-timeout", "5s", "--log-format", "json",
		"--stream-max-bytes", "262144"}, r.opts.serveArgs...)
	p := &serveProc{ServeProcess: testenv.Serve(r.t, tinyctl, args...), holder: holder}
	r.serves = append(r.serves, p)
	return p
}

// publishJobs publishes one job to each of the first n components.
func (r *rig) publishJobs(n int) {
	r.t.Helper()
	for _, name := range r.drv.Names()[:n] {
		_, err := r.conn.JetStream().Publish(testenv.Ctx(r.t, 5*time.Second), r.ns+"."+name, []byte("job"))
		testenv.Must(r.t, err)
	}
}

func (r *rig) streams() map[string]chaos.StreamState {
	r.t.Helper()
	var out map[string]chaos.StreamState
	testenv.EventuallyEvery(r.t, 30*time.Second, pollEvery, func() (err error) {
		out, err = chaos.Streams(testenv.Ctx(r.t, 5*time.Second), r.conn.JetStream(), "tinyctl_"+r.ns+"_")
		return err
	})
	return out
}

// converged checks I1 to I3 once.
func (r *rig) converged() error {
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	truth, _, err := r.drv.Truth(ctx)
	if err != nil {
		return err
	}
	snap, err := chaos.Take(ctx, r.cs, r.dyn, r.status, r.ns, cluster)
	if err != nil {
		return err
	}
	_, err = chaos.Converged(truth, r.ns, r.drv.Names(), r.opts.scaled, snap)
	return err
}

// waitConverged polls until every key has converged and returns how long
// that took; it fails the test after convergeMax.
func (r *rig) waitConverged() time.Duration {
	r.t.Helper()
	start := time.Now()
	testenv.EventuallyEvery(r.t, convergeMax, pollEvery, r.converged)
	return time.Since(start)
}

// cycles runs n fault cycles (fewer when a full run is out of time): the
// driver writes while fault runs, then stops, and the time until every key
// converges is recorded.
func (r *rig) cycles(n int, fault func(r *rig, cycle int)) {
	r.t.Helper()
	for i := range n {
		if i > 0 && outOfTime(r.begin) {
			r.t.Logf("out of -chaos.duration after %d cycles", i)
			break
		}
		ctx, stop := context.WithCancel(r.ctx)
		done := make(chan struct{})
		go func() { r.drv.Run(ctx, writeEvery); close(done) }()
		fault(r, i)
		stop()
		<-done
		d := r.waitConverged()
		r.fig.Cycles++
		r.fig.Converge = append(r.fig.Converge, d.Round(10*time.Millisecond).Seconds())
		r.t.Logf("cycle %d: converged %s after the fault", i, d.Round(10*time.Millisecond))
	}
}

// hold lets the driver write for d (a fault's schedule, not a wait for a
// condition).
func (r *rig) hold(d time.Duration) { hold(r.ctx, d) }

// hold waits d, or until ctx ends.
func hold(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// kill SIGKILLs a controller.
func (r *rig) kill(p *serveProc) {
	r.t.Helper()
	testenv.Must(r.t, p.Cmd.Process.Signal(syscall.SIGKILL))
	<-p.Exited()
}

// finish checks the invariants over the whole run, logs the figures and
// appends them to -chaos.report.
func (r *rig) finish() {
	r.t.Helper()
	truth, lost, err := r.drv.Truth(testenv.Ctx(r.t, 10*time.Second))
	testenv.Must(r.t, err)
	r.fig.Lost = len(lost)
	for _, l := range lost {
		r.t.Errorf("I1 lost write: %s", l)
	}
	snap, err := chaos.Take(testenv.Ctx(r.t, 10*time.Second), r.cs, r.dyn, r.status, r.ns, cluster)
	testenv.Must(r.t, err)
	compared, err := chaos.Converged(truth, r.ns, r.drv.Names(), r.opts.scaled, snap)
	if err != nil {
		r.t.Errorf("I1-I3 not converged at the end:\n%v", err)
	}
	if r.fig.ContentCompared = compared; compared == 0 {
		r.t.Error("I1 compared no live key's content: the check proved nothing")
	}
	for _, v := range chaos.Security(snap) {
		r.fig.Insecure++
		r.t.Errorf("I7: %s", v)
	}
	r.fig.watched(r.t, cluster, r.hist)
	for _, v := range chaos.CompareStreams(r.before, r.streams()) {
		r.fig.StreamProblems++
		r.t.Errorf("I5: %s", v)
	}
	c := r.drv.Counts()
	r.fig.Puts, r.fig.Deletes, r.fig.Unacked = c.Puts, c.Deletes, c.Unacked
	for _, w := range truth {
		if w.Live() {
			r.fig.LiveKeys++
		}
	}
	r.fig.write(r.t)
}

// figures are one scenario's numbers, for docs/reliability.md.
type figures struct {
	Scenario        string         `json:"scenario"`
	Cycles          int            `json:"cycles"`
	Puts            int            `json:"puts"`
	Deletes         int            `json:"deletes"`
	Unacked         int            `json:"unacked"`
	Seed            uint64         `json:"seed"`
	Revisions       int            `json:"revisionsSeenApplied"`
	ContentCompared int            `json:"liveKeysContentCompared"`
	LiveKeys        int            `json:"liveKeysAtEnd"`
	Lost            int            `json:"lost"`
	Resurrected     int            `json:"resurrected"`
	WrongfulDeletes int            `json:"wrongfulDeletes"`
	Backwards       int            `json:"backwards"`
	StreamProblems  int            `json:"streamProblems"`
	Insecure        int            `json:"insecure"`
	Initial         float64        `json:"initialConvergeSeconds"`
	Converge        []float64      `json:"convergeSecondsAfterFault"`
	Extra           map[string]any `json:"extra,omitempty"`
}

// watched counts the violations the Deployment watch of cluster h found
// (I2, I4), fails the test on each, and fails it when the watch saw
// nothing at all.
func (f *figures) watched(t *testing.T, cluster string, h *chaos.History) {
	t.Helper()
	for _, v := range h.Violations() {
		switch {
		case strings.HasPrefix(v, "resurrected"):
			f.Resurrected++
		case strings.HasPrefix(v, "wrongful"):
			f.WrongfulDeletes++
		default:
			f.Backwards++
		}
		t.Errorf("%s: I2/I4 (watch): %s", cluster, v)
	}
	if h.Events() == 0 || h.Revisions() == 0 {
		t.Errorf("%s: the Deployment watch saw %d events, %d revisions: it checked nothing", cluster, h.Events(), h.Revisions())
	}
	f.Revisions += h.Revisions()
}

func (f *figures) note(k string, v any) {
	if f.Extra == nil {
		f.Extra = map[string]any{}
	}
	f.Extra[k] = v
}

func (f figures) write(t *testing.T) {
	b, _ := json.Marshal(f)
	t.Logf("figures: %s", b)
	if *report == "" {
		return
	}
	fh, err := os.OpenFile(*report, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	testenv.Must(t, err)
	defer fh.Close()
	_, err = fmt.Fprintf(fh, "%s\n", b)
	testenv.Must(t, err)
}

// median of xs (0 when empty).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
