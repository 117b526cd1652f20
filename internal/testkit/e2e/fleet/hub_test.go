package fleet_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// hubSpecs opens the hub's spec bucket as a tool would (nats kv ...).
func hubSpecs(t *testing.T, hub *bus.Embedded) (jetstream.JetStream, jetstream.KeyValue) {
	t.Helper()
	conn := natstest.BusConnect(t, bus.Config{URLs: []string{hub.ClientURL()}}, nil)
	js := conn.JetStream()
	b, err := js.KeyValue(testenv.Ctx(t, 10*time.Second), specs.DefaultBucket)
	testenv.Must(t, err)
	return js, b
}

// waitGone waits until the cluster has no Deployment name.
func waitGone(t *testing.T, c *cluster, name string) {
	t.Helper()
	waitImage(t, c, name, "")
}

func TestADeleteAtARecreatedHubBucketReachesTheCluster(t *testing.T) {
	hub := startHub(t)
	eu := startCluster(t, hub, kubes[0], "eu-3", "")
	tinyctl(t, hub, "fleet", "join", "eu-3")
	eu.start(t, "--recheck", "1s")
	publish(t, hub, "encoder", "ghcr.io/acme/encoder:1", "")
	publish(t, hub, "archiver", "ghcr.io/acme/archiver:1", "")
	publish(t, hub, "archiver", "ghcr.io/acme/archiver:2", "")
	waitImage(t, eu, "encoder", "ghcr.io/acme/encoder:1")
	waitImage(t, eu, "archiver", "ghcr.io/acme/archiver:2")

	// The hub's bucket deleted and created again (as tinyctl's own error
	// for a bucket with other settings advises): its revisions start at 1,
	// below what the cluster's mirror copied (3).
	js, _ := hubSpecs(t, hub)
	testenv.Must(t, js.DeleteKeyValue(context.Background(), specs.DefaultBucket))
	if rev := publish(t, hub, "encoder", "ghcr.io/acme/encoder:2", ""); rev != 1 {
		t.Fatalf("the recreated bucket's first revision is %d, want 1", rev)
	}
	// The update arrives, and the component the new bucket does not hold
	// is kept (an orphan, reported), not deleted.
	waitImage(t, eu, "encoder", "ghcr.io/acme/encoder:2")
	if got := image(t, eu.kube, "archiver"); got != "ghcr.io/acme/archiver:2" {
		t.Fatalf("archiver, which the recreated bucket does not hold, has image %q, want it kept", got)
	}
	waitHubStatus(t, hub, "archiver@eu-3", func(it statusItem) bool { return it.Reason == "SpecMissing" })
	waitHubStatus(t, hub, "encoder@eu-3", func(it statusItem) bool { return upToDate(it) && it.ObservedRevision == 1 })

	// A delete at the recreated bucket is carried out.
	tinyctl(t, hub, "delete", "encoder", "-n", ns, "--yes")
	waitGone(t, eu, "encoder")
	if got := image(t, eu.kube, "archiver"); got != "ghcr.io/acme/archiver:2" {
		t.Fatalf("archiver image %q after encoder's delete, want it kept", got)
	}
}

func TestADeleteCompactedAtTheHubWhileAClusterWasCutOffReachesIt(t *testing.T) {
	hub := startHub(t)
	eu := startCluster(t, hub, kubes[1], "eu-4", "")
	tinyctl(t, hub, "fleet", "join", "eu-4")
	eu.start(t, "--recheck", "500ms")
	publish(t, hub, "encoder", "ghcr.io/acme/encoder:1", "")
	publish(t, hub, "archiver", "ghcr.io/acme/archiver:1", "")
	waitImage(t, eu, "encoder", "ghcr.io/acme/encoder:1")
	waitImage(t, eu, "archiver", "ghcr.io/acme/archiver:1")

	// Cut off, the cluster misses a delete, which the hub then compacts
	// away (nats kv compact: every delete marker purged), and an update.
	eu.link.Cut()
	tinyctl(t, hub, "delete", "encoder", "-n", ns, "--yes")
	_, b := hubSpecs(t, hub)
	testenv.Must(t, b.PurgeDeletes(context.Background(), jetstream.DeleteMarkersOlderThan(-1)))
	if _, err := b.Get(context.Background(), "media.encoder"); err == nil {
		t.Fatal("the hub still holds encoder after compaction: the fault did not land")
	}
	rev := publish(t, hub, "archiver", "ghcr.io/acme/archiver:2", "")
	eu.link.Restore()

	waitImage(t, eu, "archiver", "ghcr.io/acme/archiver:2")
	eu.waitMirror(t, "media.archiver", rev)
	waitGone(t, eu, "encoder")
	testenv.Eventually(t, 30*time.Second, func() error {
		if it, found := hubStatus(t, hub)["encoder@eu-4"]; found {
			return fmt.Errorf("encoder@eu-4 still reported at the hub: %+v", it)
		}
		return nil
	})
	// The cluster's mirror no longer holds it either.
	conn := natstest.BusConnect(t, bus.Config{URLs: []string{eu.nats.ClientURL()}}, nil)
	mirror, err := specs.Open(testenv.Ctx(t, 10*time.Second), conn, specs.Config{}, kv.Existing)
	testenv.Must(t, err)
	if e, err := mirror.Latest(context.Background(), "media.encoder"); err == nil {
		t.Errorf("the mirror still holds encoder at revision %d", e.Revision)
	}
}

// revisionWatch records, from a watch of the cluster's Deployments, the
// revision each one was written at, in order.
type revisionWatch struct {
	mu              sync.Mutex
	seen            map[string][]uint64
	events, deleted int
}

func (rw *revisionWatch) deletions() int {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return rw.deleted
}

func watchRevisions(t *testing.T, c *cluster) *revisionWatch {
	t.Helper()
	rw := &revisionWatch{seen: map[string][]uint64{}}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.kube.Clientset(t).AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{})
	testenv.Must(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok {
				continue
			}
			if ev.Type == watch.Deleted {
				rw.mu.Lock()
				rw.deleted++
				rw.mu.Unlock()
				continue
			}
			rev, err := strconv.ParseUint(d.Annotations[render.AnnotationRevision], 10, 64)
			if err != nil {
				t.Errorf("Deployment %s: revision annotation %q", d.Name, d.Annotations[render.AnnotationRevision])
				continue
			}
			rw.mu.Lock()
			if s := rw.seen[d.Name]; len(s) == 0 || s[len(s)-1] != rev {
				rw.seen[d.Name] = append(s, rev)
			}
			rw.events++
			rw.mu.Unlock()
		}
	}()
	return rw
}

// backwards returns every Deployment whose revision went down, and how
// many events the watch saw.
func (rw *revisionWatch) backwards() (map[string][]uint64, int) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	out := map[string][]uint64{}
	for name, revs := range rw.seen {
		if !slices.IsSorted(revs) {
			out[name] = slices.Clone(revs)
		}
	}
	return out, rw.events
}

func TestAClusterThatLostItsMirrorNeverAppliesAnOlderRevision(t *testing.T) {
	hub := startHub(t)
	eu := startCluster(t, hub, kubes[0], "eu-5", "")
	tinyctl(t, hub, "fleet", "join", "eu-5")
	eu.start(t, "--recheck", "1s")
	const keys, rounds = 8, 4
	name := func(k int) string { return fmt.Sprintf("loss-%d", k) }
	img := func(k, r int) string { return fmt.Sprintf("ghcr.io/acme/loss-%d:%d", k, r) }
	var last uint64
	for r := 1; r <= rounds; r++ {
		for k := range keys {
			last = publish(t, hub, name(k), img(k, r), "")
		}
	}
	for k := range keys {
		waitImage(t, eu, name(k), img(k, rounds))
	}
	rw := watchRevisions(t, eu)

	// The cluster's store loses its mirror while the hub is out of reach:
	// the controller starts on an empty mirror, which then copies the
	// hub's bucket from its first revision, old revisions first.
	eu.link.Cut()
	eu.stop(t)
	conn := natstest.BusConnect(t, bus.Config{URLs: []string{eu.nats.ClientURL()}}, nil)
	testenv.Must(t, conn.JetStream().DeleteStream(context.Background(), "KV_"+specs.DefaultBucket))
	eu.start(t, "--recheck", "1s")
	eu.link.Restore()
	eu.waitMirror(t, "media."+name(keys-1), last)
	for k := range keys {
		waitImage(t, eu, name(k), img(k, rounds))
	}
	waitHubStatus(t, hub, name(0)+"@eu-5", func(it statusItem) bool { return upToDate(it) && it.LatestRevision == it.ObservedRevision })
	back, events := rw.backwards()
	if events == 0 {
		t.Fatal("the Deployment watch saw no event: it checked nothing")
	}
	if len(back) != 0 {
		t.Errorf("Deployments written at an older revision after a newer one: %v", back)
	}
	if n := rw.deletions(); n != 0 {
		t.Errorf("%d Deployments deleted: a lost mirror deletes nothing", n)
	}
	t.Logf("%d Deployment events watched; none went back, none deleted", events)
}
