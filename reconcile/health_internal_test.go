package reconcile

import (
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/tinyctl/tinyctl/api"
)

// TestAQueuedRunWhoseReasonWasTakenIsNotAFullReconcile: a wake marks the
// key and then queues it; a reconcile that starts in between takes the
// mark and does the work, and the run the queue then holds finds nothing
// asked. It gets a health check, not a second full reconcile (a stream
// lookup and a render for nothing), while a new or failed revision and an
// explicit ask still get one.
func TestAQueuedRunWhoseReasonWasTakenIsNotAFullReconcile(t *testing.T) {
	c := New(Config{}, Deps{})
	defer c.queue.ShutDown()
	const key = "ns.a"
	c.handleEvent(Event{Entry: Entry{Key: key, Revision: 1, Value: []byte("{}")}})
	if !c.wantsFull(key, 1) {
		t.Fatal("a new revision was not reconciled in full")
	}
	c.settled.settle(key, 1, false)

	c.needsFull.add(key) // a child edited: the wake marks the key...
	if !c.wantsFull(key, 1) {
		t.Fatal("a reconcile that started after the mark did not take it")
	}
	// ...and its queue.Add, which came while that reconcile ran, queues
	// one more run with nothing asked.
	if c.wantsFull(key, 1) {
		t.Error("the queued run of a wake already served was a full reconcile")
	}
	c.enqueueHealth(key)
	if c.wantsFull(key, 1) {
		t.Error("a workload event of a settled revision was a full reconcile")
	}
	c.enqueue(key)
	if !c.wantsFull(key, 1) {
		t.Error("an explicit ask was not a full reconcile")
	}
	c.settled.unsettle(key) // the last attempt failed
	if !c.wantsFull(key, 1) {
		t.Error("the retry of a failed revision was not a full reconcile")
	}
	c.settled.settle(key, 1, false)
	if !c.wantsFull(key, 2) {
		t.Error("a revision that has not settled was not reconciled in full")
	}
}

// TestAHealthCheckKeepsTheRotationTimer: a retry queued before the
// credentials' rotation replaces the rotation's delayed entry (the queue
// keeps the earliest per key). When that run is only a health check, it
// asks for the rotation again, at the same time.
func TestAHealthCheckKeepsTheRotationTimer(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := New(Config{CredentialsTTL: time.Hour}, Deps{Clock: testingclock.NewFakeClock(now)})
	c.queue.ShutDown()
	q := &delays{TypedRateLimitingInterface: c.queue}
	c.queue = q
	const key = "ns.a"
	prev := api.Status{Component: key, Children: []api.Child{
		{Kind: "Deployment", Name: "a"},
		{Kind: "Secret", Name: "a-nats", Expires: now.Add(time.Hour)},
	}}
	c.keepRotation(key, prev)
	if want := []string{key + " in 30m0s"}; !slices.Equal(q.after, want) {
		t.Errorf("a health check queued %q, want %q (the rotation, half the TTL before the expiry)", q.after, want)
	}
}

// delays records AddAfter calls.
type delays struct {
	workqueue.TypedRateLimitingInterface[string]
	after []string
}

func (d *delays) AddAfter(key string, wait time.Duration) {
	d.after = append(d.after, key+" in "+wait.String())
}
