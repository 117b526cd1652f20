package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// TestChaosLeaderWriteDelayedInFlight: the leader's write of a Deployment
// is held in the network (the API proxy) and the leader is stopped past
// its lease; the standby takes over, applies that revision and a newer
// one; then the held write arrives at the API server. The chart's fence
// policy refuses it (its fencing token is older than the one the new
// leader left), so the Deployment never goes back. Without the policy the
// write would land: it carries the older revision and the older token,
// both checked.
func TestChaosLeaderWriteDelayedInFlight(t *testing.T) {
	r := newRig(t, "a deposed leader's write delayed in flight", rigOptions{standby: true, proxied: true})
	refused := 0
	r.cycles(cycleCount(1, 4), func(r *rig, cycle int) {
		r.hold(time.Second)
		r.drv.Pause(true) // the held component is neither deleted nor changed but by this fault
		defer r.drv.Pause(false)
		old, next := r.leader, r.serves[0]
		if next == old {
			next = r.serves[1]
		}
		name := r.drv.Names()[cycle%keys]
		held := r.api.Hold(func(req *http.Request) bool {
			return req.Method == http.MethodPatch && strings.HasPrefix(req.UserAgent(), "tinyctl-serve/"+old.holder) &&
				strings.HasSuffix(req.URL.Path, "/deployments/"+name)
		})
		r.putValid(name)
		select {
		case <-held.Caught():
		case <-time.After(30 * time.Second):
			t.Fatalf("the leader %s wrote no Deployment %s within 30s: nothing was held", old.holder, name)
		}
		testenv.Must(t, old.Cmd.Process.Signal(syscall.SIGSTOP))
		next.WaitReady(t, "leader", 30*time.Second)
		newest := r.putValid(name)
		testenv.EventuallyEvery(t, 30*time.Second, pollEvery, func() error { return r.deploymentAt(name, newest) })

		code, answer, err := held.Release(testenv.Ctx(t, 30*time.Second))
		testenv.Must(t, err)
		if code != http.StatusForbidden || !strings.Contains(answer, apply.AnnotationFence+" is older") {
			t.Errorf("the deposed leader's held write was answered %d: %s; want 403 from the fence policy", code, answer)
		} else {
			refused++
		}
		r.heldWasStale(held.Body(), name)
		if err := r.deploymentAt(name, newest); err != nil {
			t.Errorf("after the held write arrived: %v", err)
		}
		testenv.Must(t, old.Cmd.Process.Signal(syscall.SIGCONT))
		old.WaitReady(t, "standby", 30*time.Second)
		r.leader = next
	})
	if refused == 0 {
		t.Error("no held write was refused: the fault proved nothing")
	}
	r.fig.note("heldWritesRefused", refused)
	r.finish()
}

// putValid puts name until the put is a valid spec (the driver makes one
// in ten invalid) and returns its revision.
func (r *rig) putValid(name string) uint64 {
	r.t.Helper()
	for range 20 {
		r.drv.Put(r.ctx, name)
		truth, _, err := r.drv.Truth(testenv.Ctx(r.t, 10*time.Second))
		testenv.Must(r.t, err)
		if w := truth[r.drv.Key(name)]; w.Live() && !w.Invalid {
			return w.Revision
		}
	}
	r.t.Fatalf("20 puts of %s and none valid", name)
	return 0
}

// deploymentAt says what is wrong unless Deployment name carries revision
// rev.
func (r *rig) deploymentAt(name string, rev uint64) error {
	d, err := r.cs.AppsV1().Deployments(r.ns).Get(r.ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if got := d.Annotations[render.AnnotationRevision]; got != strconv.FormatUint(rev, 10) {
		return fmt.Errorf("Deployment %s carries revision %s, want %d", name, got, rev)
	}
	return nil
}

// heldWasStale fails the test unless the held write of name carried an
// older revision and an older fencing token than the live Deployment: had
// the API server taken it, the Deployment would have gone back.
func (r *rig) heldWasStale(body []byte, name string) {
	r.t.Helper()
	var sent struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	testenv.Must(r.t, json.Unmarshal(body, &sent))
	live, err := r.cs.AppsV1().Deployments(r.ns).Get(r.ctx, name, metav1.GetOptions{})
	testenv.Must(r.t, err)
	sentToken, liveToken := sent.Metadata.Annotations[apply.AnnotationFence], live.Annotations[apply.AnnotationFence]
	sentRev, liveRev := sent.Metadata.Annotations[render.AnnotationRevision], live.Annotations[render.AnnotationRevision]
	if sentToken == "" || !(sentToken < liveToken) || sentRev == liveRev {
		r.t.Errorf("the held write (token %q, revision %s) was not older than the live Deployment (token %q, revision %s): the fault proved nothing",
			sentToken, sentRev, liveToken, liveRev)
	}
}

// TestChaosLeaderStatusDelayedInFlight: a new revision arrives, the
// leader applies it and sends its status record, and from that record on
// what the leader sends NATS is held in the network (its link's proxy
// delays it; what NATS sends still flows), its lease renewals with it. The lease runs
// out on the server; the standby, on a link of its own, takes over and
// records that revision and a newer one. Then the held bytes arrive. The
// record the deposed leader sent is refused (the record has moved on since
// the revision it was written against), so the status never goes back
// (watched on the record itself); without revision-checked status writes
// it lands over the newer one.
func TestChaosLeaderStatusDelayedInFlight(t *testing.T) {
	r := newRig(t, "a deposed leader's status write delayed in flight", rigOptions{link: true, direct: true, standby: true})
	heldBytes := 0
	r.cycles(cycleCount(1, 4), func(r *rig, cycle int) {
		r.hold(time.Second)
		r.drv.Pause(true)
		defer r.drv.Pause(false)
		old := r.proxiedLeads()
		next := r.serves[len(r.serves)-1]
		name := r.drv.Names()[cycle%keys]
		seen := r.watchObserved(name)

		// From the leader's status write of name on, what it sends waits.
		r.link.DelayFrom([]byte("$KV." + status.DefaultBucket + "." + status.Key(r.drv.Key(name), cluster) + " "))
		rev := r.putValid(name)
		testenv.EventuallyEvery(t, 30*time.Second, pollEvery, func() error {
			if !r.link.Delaying() {
				return fmt.Errorf("the leader sent no status record of %s at revision %d", name, rev)
			}
			return nil
		})
		next.WaitReady(t, "leader", 30*time.Second)
		newest := r.putValid(name)
		testenv.EventuallyEvery(t, 30*time.Second, pollEvery, func() error { return r.statusAt(name, newest) })

		held := r.link.Deliver()
		if held == 0 {
			t.Error("the proxy held nothing the deposed leader sent: the fault proved nothing")
		}
		heldBytes += held
		old.WaitReady(t, "standby", 30*time.Second) // it has read what the server answered to what was held
		if err := r.statusAt(name, newest); err != nil {
			t.Errorf("after the held bytes arrived: %v", err)
		}
		if revs := seen(); !slices.IsSorted(revs) {
			t.Errorf("the status record of %s went back: observed revisions %v", name, revs)
		} else if len(revs) < 2 {
			t.Errorf("the status record of %s was written %d times during the fault (%v): the check proved nothing", name, len(revs), revs)
		}
		r.leader = next
	})
	r.fig.note("heldBytes", heldBytes)
	r.finish()
}

// watchObserved watches name's status record from now on; the function
// returned gives the observed revisions of the records written so far.
func (r *rig) watchObserved(name string) func() []uint64 {
	r.t.Helper()
	ctx, cancel := context.WithCancel(r.ctx)
	r.t.Cleanup(cancel)
	kv, err := r.conn.JetStream().KeyValue(ctx, status.DefaultBucket)
	testenv.Must(r.t, err)
	w, err := kv.Watch(ctx, status.Key(r.drv.Key(name), cluster), jetstream.UpdatesOnly())
	testenv.Must(r.t, err)
	var mu sync.Mutex
	var revs []uint64
	go func() {
		for u := range w.Updates() {
			var st api.Status
			if u != nil && json.Unmarshal(u.Value(), &st) == nil {
				mu.Lock()
				revs = append(revs, st.ObservedRevision)
				mu.Unlock()
			}
		}
	}()
	return func() []uint64 {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(revs)
	}
}

// statusAt says what is wrong unless name's status record observed rev.
func (r *rig) statusAt(name string, rev uint64) error {
	rec, err := r.status.Get(r.ctx, r.drv.Key(name), cluster)
	if err != nil {
		return err
	}
	if rec.ObservedRevision != rev {
		return fmt.Errorf("the status of %s observed revision %d, want %d", name, rec.ObservedRevision, rev)
	}
	return nil
}

// proxiedLeads makes the controller that reaches NATS through the link
// (the first) the leader and returns it: after a cycle the direct one
// leads, so it is killed and a new direct standby started.
func (r *rig) proxiedLeads() *serveProc {
	r.t.Helper()
	proxied := r.serves[0]
	if r.leader != proxied {
		r.kill(r.leader)
		proxied.WaitReady(r.t, "leader", 30*time.Second)
		r.leader = proxied
		r.startServe().WaitReady(r.t, "standby", 30*time.Second)
	}
	return proxied
}
