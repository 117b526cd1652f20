package chaos_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/deploy"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestChaosAPIServerRestarted restarts kube-apiserver and etcd while the
// driver keeps writing specs.
func TestChaosAPIServerRestarted(t *testing.T) {
	r := newRig(t, "kube-apiserver restarted", rigOptions{})
	r.cycles(cycleCount(1, 4), func(r *rig, _ int) {
		r.hold(time.Second)
		testenv.Must(t, kube.Restart(r.ctx))
		r.hold(time.Second)
	})
	r.finish()
}

// TestChaosLeaderPaused SIGSTOPs the leader past its lease TTL with a
// standby running: the standby must take over, and the paused one, once
// resumed, must not write to the API server.
func TestChaosLeaderPaused(t *testing.T) {
	r := newRig(t, "leader SIGSTOPped past its lease", rigOptions{standby: true})
	var takeovers []float64
	r.cycles(cycleCount(1, 4), func(r *rig, _ int) {
		paused := r.leader
		other := r.serves[0]
		if other == paused {
			other = r.serves[1]
		}
		r.hold(time.Second)
		before := kube.AuditMark(t)
		testenv.Must(t, paused.Cmd.Process.Signal(syscall.SIGSTOP))
		stopped := time.Now()
		other.WaitReady(t, "leader", 30*time.Second)
		takeovers = append(takeovers, time.Since(stopped).Round(10*time.Millisecond).Seconds())
		r.hold(time.Until(stopped.Add(leaseTTL + 2*time.Second)))
		mark := kube.AuditMark(t)
		testenv.Must(t, paused.Cmd.Process.Signal(syscall.SIGCONT))
		r.hold(3 * time.Second)
		paused.WaitReady(t, "standby", 30*time.Second)
		if w := writesBy(t, paused.holder, mark); len(w) > 0 {
			t.Errorf("the resumed leader %s wrote %d times, first %s %s", paused.holder, len(w), w[0].Verb, w[0].RequestURI)
		}
		// The filter's positive control: it finds the new leader's writes.
		if w := writesBy(t, other.holder, before); len(w) == 0 {
			t.Errorf("the audit log shows no write by the new leader %s since the pause: the check of the paused one's writes proves nothing", other.holder)
		}
		r.leader = other
	})
	r.fig.note("takeoverSeconds", takeovers)
	r.finish()
}

// writesBy returns the persisted API writes of a controller since mark.
func writesBy(t *testing.T, holder string, mark int64) []testenv.AuditEvent {
	return kube.Writes(t, mark, func(e testenv.AuditEvent) bool {
		return strings.HasPrefix(e.UserAgent, "tinyctl-serve/"+holder) && e.ResponseStatus.Code < 300
	})
}

// TestChaosAPIWriteErrors puts a proxy in front of the API server that
// answers 20% of the controller's writes with 429, 500 or 409.
func TestChaosAPIWriteErrors(t *testing.T) {
	r := newRig(t, "20% of API writes fail (429/500/409)", rigOptions{faulty: 0.2})
	r.cycles(cycleCount(1, 6), func(r *rig, _ int) { r.hold(4 * time.Second) })
	writes, failed := r.api.Injected()
	if failed[http.StatusGatewayTimeout] == 0 || len(failed) < 2 {
		t.Errorf("faults injected %v in %d writes: want failed writes and committed ones (504)", failed, writes)
	}
	r.fig.note("apiWrites", writes)
	r.fig.note("injected", fmt.Sprint(failed))
	r.finish()
}

// TestChaosBucketRecreated deletes the spec bucket and creates it again,
// empty: every component's children must be kept and reported orphaned,
// none deleted; keys written to the new bucket converge again.
func TestChaosBucketRecreated(t *testing.T) {
	r := newRig(t, "spec bucket deleted and recreated", rigOptions{})
	r.cycles(cycleCount(1, 3), func(r *rig, _ int) {
		r.hold(time.Second)
		r.drv.Pause(true) // until the orphans are reported
		r.waitConverged() // deletes made before the bucket goes are carried out
		uids := r.deploymentUIDs()
		js := r.conn.JetStream()
		testenv.Must(t, js.DeleteKeyValue(r.ctx, specs.DefaultBucket))
		store, err := specs.Open(testenv.Ctx(t, 10*time.Second), r.conn, specs.Config{}, kv.Ensure)
		testenv.Must(t, err)
		r.drv.SetStore(store)
		r.hist.Reset()
		start := time.Now()
		testenv.EventuallyEvery(t, 60*time.Second, pollEvery, func() error { return r.orphansReported(uids) })
		r.fig.note("orphansReportedSeconds", time.Since(start).Round(10*time.Millisecond).Seconds())
		r.fig.note("orphans", len(uids))
		if len(uids) == 0 {
			t.Error("no Deployment existed when the bucket was recreated: the fault proved nothing")
		}
		for name, uid := range uids {
			if now := r.deploymentUIDs()[name]; now != uid {
				t.Errorf("Deployment %s was deleted or replaced after the bucket was recreated (uid %s -> %q)", name, uid, now)
			}
		}
		r.drv.Pause(false)
		r.hold(2 * time.Second)
	})
	r.finish()
}

func (r *rig) deploymentUIDs() map[string]types.UID { return deploymentUIDs(r.t, r.ctx, r.cs, r.ns) }

// deploymentUIDs returns the UID of every Deployment in ns by name.
func deploymentUIDs(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) map[string]types.UID {
	t.Helper()
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	testenv.Must(t, err)
	out := map[string]types.UID{}
	for _, d := range deps.Items {
		out[d.Name] = d.UID
	}
	return out
}

func (r *rig) orphansReported(uids map[string]types.UID) error {
	return orphansReported(r.ctx, r.status, cluster, r.ns, uids)
}

// orphansReported checks that every Deployment in uids has its status in
// cluster say Orphaned=True.
func orphansReported(ctx context.Context, st *status.Store, cluster, ns string, uids map[string]types.UID) error {
	recs, err := st.ListCluster(ctx, cluster)
	if err != nil {
		return err
	}
	byKey := map[string]api.Status{}
	for _, rec := range recs {
		byKey[rec.Component] = rec.Status
	}
	for name := range uids {
		if s := byKey[api.Key(ns, name)]; !s.IsTrue(api.ConditionOrphaned) {
			return fmt.Errorf("%s: %s not reported orphaned yet: status %+v", cluster, name, s)
		}
	}
	return nil
}

// TestChaosScaledObjectCRDReinstalled removes the ScaledObject CRD (and
// with it every ScaledObject) and installs it again while scaled
// components are written.
func TestChaosScaledObjectCRDReinstalled(t *testing.T) {
	kube.ApplyCRD(t, deploy.ScaledObjectCRD)
	scaled := func(name string) bool { return name[len(name)-1]%3 == 0 }
	r := newRig(t, "ScaledObject CRD removed and reinstalled", rigOptions{scaled: scaled})
	r.cycles(cycleCount(1, 4), func(r *rig, _ int) {
		r.hold(time.Second)
		kube.DeleteCRD(t, "scaledobjects.keda.sh")
		r.hold(2 * time.Second)
		kube.ApplyCRD(t, deploy.ScaledObjectCRD)
		r.hold(time.Second)
	})
	r.finish()
}

// TestChaosStoreFull fills the JetStream store to its limit with a
// stream of its own while the driver writes (spec puts, status writes and
// lease renewals then fail), holds it full, and frees it.
func TestChaosStoreFull(t *testing.T) {
	r := newRig(t, "JetStream store filled, then freed", rigOptions{maxStore: 64 << 20})
	var filled []int
	r.cycles(cycleCount(1, 4), func(r *rig, _ int) {
		r.hold(time.Second)
		filled = append(filled, r.fillStore())
		r.hold(5 * time.Second)
		testenv.Must(t, r.conn.JetStream().DeleteStream(r.ctx, "CHAOS_FILLER"))
		r.hold(time.Second)
	})
	r.fig.note("filledMiB", filled)
	r.finish()
}

// fillStore publishes 512 KiB messages into a stream without limits until
// the server refuses one for lack of room, and returns how many MiB it
// wrote.
func (r *rig) fillStore() int {
	r.t.Helper()
	js := r.conn.JetStream()
	_, err := js.CreateStream(r.ctx, jetstream.StreamConfig{Name: "CHAOS_FILLER", Subjects: []string{"chaos.filler"}, Storage: jetstream.FileStorage})
	testenv.Must(r.t, err)
	chunk := make([]byte, 512<<10)
	for i := range 1000 {
		ctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
		_, err := js.Publish(ctx, "chaos.filler", chunk)
		cancel()
		if err != nil {
			r.t.Logf("store full after %d MiB: %v", i/2, err)
			return i / 2
		}
	}
	r.t.Fatal("the store never filled")
	return 0
}
