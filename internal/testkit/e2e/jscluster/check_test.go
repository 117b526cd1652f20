package jscluster_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// watchResurrections watches the Deployments of ns and counts each one
// added or changed carrying a revision older than a delete of its
// component that was acknowledged at least a second before (the grace
// covers a write of the older revision whose event was still on its way).
// It returns a function giving the count so far.
func watchResurrections(t *testing.T, ns string, led *ledger) func() int {
	t.Helper()
	dc, _ := kube.Dynamic(t)
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu    sync.Mutex
		count int
	)
	w, err := dc.Resource(deployments).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	testenv.Must(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) || u.GetDeletionTimestamp() != nil {
				continue
			}
			rev, _ := strconv.ParseUint(u.GetAnnotations()[render.AnnotationRevision], 10, 64)
			key := api.Key(ns, u.GetName())
			if d, ok := led.deletedAfter(key, rev, time.Now().Add(-time.Second)); ok {
				t.Logf("resurrected: Deployment %s at revision %d after delete %d was acknowledged at %s",
					u.GetName(), rev, d.rev, d.at.Format(time.StampMilli))
				mu.Lock()
				count++
				mu.Unlock()
			}
		}
	}()
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return count
	}
}

// checkConverged polls until every key's Deployment and status record
// show the key's latest revision, or, for a deleted key, are gone. It
// fails at once when a key's latest revision is older than its last
// acknowledged write (a lost write).
func checkConverged(t *testing.T, s *specs.Store, st *status.Store, led *ledger, ns string, keys []string, within time.Duration) {
	t.Helper()
	dc, _ := kube.Dynamic(t)
	testenv.Eventually(t, within, func() error {
		var errs []error
		for _, name := range keys {
			key := api.Key(ns, name)
			e, err := latest(s, key)
			if errors.Is(err, bus.ErrNotFound) && led.state(key).rev == 0 {
				continue // never written
			}
			if err != nil {
				return err
			}
			if err := lostWrite(led.state(key), e); err != nil {
				t.Fatal(err)
			}
			errs = append(errs, converged(dc.Resource(deployments).Namespace(ns), st, key, name, e))
		}
		return errors.Join(errs...)
	})
}

// latest reads key's latest revision from the stream's leader: a direct
// get may be answered by a replica still catching up after a partition
// healed (one answered revision 407 of a key whose acknowledged 567 the
// leader held and the controller had applied), which is a stale read, not
// a lost write.
func latest(s *specs.Store, key string) (kv.Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return s.LatestFromLeader(ctx, key)
}

// lostWrite reports a key whose latest revision e contradicts the last
// acknowledged write: older, or, with no failed write since, different.
func lostWrite(ack keyState, e kv.Entry) error {
	switch {
	case e.Revision < ack.rev:
		return fmt.Errorf("lost write: %s is at revision %d, older than acknowledged %d", e.Key, e.Revision, ack.rev)
	case !ack.ambiguous && (e.Revision != ack.rev || (e.Op != kv.OpPut) != ack.deleted):
		return fmt.Errorf("lost write: %s is %s at %d, acknowledged deleted=%t at %d", e.Key, e.Op, e.Revision, ack.deleted, ack.rev)
	}
	return nil
}

// deploymentGetter is the slice of the dynamic client converged reads.
type deploymentGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error)
}

// converged returns nil when the Deployment and the status of key reflect
// its latest revision e.
func converged(deps deploymentGetter, st *status.Store, key, name string, e kv.Entry) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	d, err := deps.Get(ctx, name, metav1.GetOptions{})
	if e.Op != kv.OpPut {
		_, serr := st.Get(ctx, key, cluster)
		switch {
		case err == nil:
			return fmt.Errorf("%s deleted at %d still has its Deployment (revision %s)", key, e.Revision, d.GetAnnotations()[render.AnnotationRevision])
		case !apierrors.IsNotFound(err):
			return err
		case !errors.Is(serr, bus.ErrNotFound):
			return fmt.Errorf("%s deleted at %d: status record %v, want none", key, e.Revision, serr)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s at %d: %w", key, e.Revision, err)
	}
	if got := d.GetAnnotations()[render.AnnotationRevision]; got != strconv.FormatUint(e.Revision, 10) {
		return fmt.Errorf("%s: Deployment at revision %s, want %d", key, got, e.Revision)
	}
	return observed(st, key, e.Revision)
}

// checkJobs checks that each queue's stream holds every job acknowledged to
// its subject (no worker consumes them).
func checkJobs(t *testing.T, conn *bus.Conn, ns string, sent map[string]int) {
	t.Helper()
	for subj, n := range sent {
		name := strings.TrimPrefix(subj, ns+".")
		ctx := testenv.Ctx(t, 10*time.Second)
		s, err := conn.JetStream().Stream(ctx, render.StreamName(ns, name))
		testenv.Must(t, err)
		if got := s.CachedInfo().State.Msgs; got != uint64(n) {
			t.Errorf("stream of %s holds %d jobs, %d were acknowledged", name, got, n)
		}
	}
}

// checkReplicas checks that the buckets the controller made, and the
// streams of components that set no replicas, have three.
func checkReplicas(t *testing.T, conn *bus.Conn, ns string, queues []string) {
	t.Helper()
	ctx := testenv.Ctx(t, 10*time.Second)
	names := []string{"KV_tinyctl-components", "KV_tinyctl-status", "KV_tinyctl-heartbeats", "KV_tinyctl-leases"}
	for _, q := range queues {
		names = append(names, render.StreamName(ns, q))
	}
	for _, name := range names {
		s, err := conn.JetStream().Stream(ctx, name)
		testenv.Must(t, err)
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Errorf("stream %s has %d replicas, want 3", name, r)
		}
	}
}

// waitOneLeader polls until one controller reports ready as leader and the
// others as standbys.
func waitOneLeader(t *testing.T, ctrls []*testenv.ServeProcess, within time.Duration) {
	t.Helper()
	testenv.Eventually(t, within, func() error {
		leaders := 0
		for _, c := range ctrls {
			code, body, err := c.Get("/readyz")
			if err != nil || code != http.StatusOK {
				return fmt.Errorf("/readyz = %d %q %v", code, strings.TrimSpace(body), err)
			}
			if strings.Contains(body, "leader") {
				leaders++
			}
		}
		if leaders != 1 {
			return fmt.Errorf("%d leaders ready, want 1", leaders)
		}
		return nil
	})
}

var acquisitions = regexp.MustCompile(`(?m)^tinyctl_lease_acquisitions_total (\S+)$`)

// leaseAcquisitions sums tinyctl_lease_acquisitions_total over ctrls: the
// number of times the lease changed hands (or was won again).
func leaseAcquisitions(t *testing.T, ctrls []*testenv.ServeProcess) float64 {
	t.Helper()
	var n float64
	for _, c := range ctrls {
		_, body, err := c.Get("/metrics")
		testenv.Must(t, err)
		if m := acquisitions.FindStringSubmatch(body); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			n += v
		}
	}
	return n
}
