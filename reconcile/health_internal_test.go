package reconcile

import "testing"

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
