package reconcile

import (
	"testing"
	"time"
)

// TestANewRevisionStartsItsRetriesAfresh: a key that failed many times
// (an API server outage while its spec kept changing) is retried at the
// shortest delay once a new revision arrives, not after the capped
// backoff its earlier revisions had reached.
func TestANewRevisionStartsItsRetriesAfresh(t *testing.T) {
	c := New(Config{RetryBase: 10 * time.Millisecond, RetryMax: 5 * time.Minute}, Deps{})
	defer c.queue.ShutDown()
	const key = "ns.a"
	c.handleEvent(Event{Entry: Entry{Key: key, Revision: 1, Value: []byte("{}")}})
	for range 17 {
		c.queue.AddRateLimited(key)
	}
	if n := c.queue.NumRequeues(key); n != 17 {
		t.Fatalf("requeues before the new revision = %d, want 17", n)
	}
	c.handleEvent(Event{Entry: Entry{Key: key, Revision: 2, Deleted: true}})
	if n := c.queue.NumRequeues(key); n != 0 {
		t.Errorf("requeues after a new revision = %d, want 0 (retries start afresh)", n)
	}
	c.handleEvent(Event{Entry: Entry{Key: key, Revision: 2, Deleted: true}}) // replayed: not new
	c.queue.AddRateLimited(key)
	c.handleEvent(Event{Entry: Entry{Key: key, Revision: 1}})
	if n := c.queue.NumRequeues(key); n != 1 {
		t.Errorf("requeues after an old revision = %d, want 1 (only a newer revision resets them)", n)
	}
}
