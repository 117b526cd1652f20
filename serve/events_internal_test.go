package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/flowcontrol"
)

// TestTheEventsStreamIsTriedForAsLongAsItTakes: the retry goes on past
// the backoff's cap (a store full for an hour still gets its events stream
// once room is made), and stops when the leadership ends.
func TestTheEventsStreamIsTriedForAsLongAsItTakes(t *testing.T) {
	b := wait.Backoff{Duration: time.Millisecond, Factor: 2, Cap: 2 * time.Millisecond}
	calls := 0
	retryUntilDone(context.Background(), b, func(context.Context) error {
		calls++
		if calls < 40 {
			return errors.New("insufficient storage resources available")
		}
		return nil
	})
	if calls != 40 {
		t.Errorf("ensure called %d times, want 40: tried until it succeeded", calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	retryUntilDone(ctx, b, func(context.Context) error {
		calls++
		if calls == 5 {
			cancel()
		}
		return errors.New("still full")
	})
	if calls != 5 {
		t.Errorf("ensure called %d times after the context ended at the 5th, want 5", calls)
	}
}

// recorded is a recorder that keeps the notes it is given.
type recorded struct{ notes chan string }

func (r recorded) Eventf(_ runtime.Object, _ runtime.Object, _, _, _, note string, args ...any) {
	r.notes <- fmt.Sprintf(note, args...)
}

// TestABurstOfKubernetesEventsWaitsInABoundedQueue: the queue takes
// kubeQueueSize events and refuses the next (counted as dropped by the
// sink); what it holds reaches the recorder in order, each note cut to
// what the API server accepts.
func TestABurstOfKubernetesEventsWaitsInABoundedQueue(t *testing.T) {
	rec := recorded{notes: make(chan string, kubeQueueSize)}
	q := &kubeQueue{rec: rec, pending: make(chan kubeEvent, kubeQueueSize), limit: flowcontrol.NewFakeAlwaysRateLimiter()}
	long := strings.Repeat("é", noteLimit) // 2 bytes each
	for i := range kubeQueueSize {
		note := fmt.Sprint(i)
		if i == 0 {
			note = long
		}
		if !q.add(kubeEvent{note: note}) {
			t.Fatalf("event %d refused by a queue of %d", i, kubeQueueSize)
		}
	}
	if q.add(kubeEvent{note: "one too many"}) {
		t.Fatalf("a full queue took another event")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.run(ctx)
	first := <-rec.notes
	if len(first) > noteLimit || !utf8.ValidString(first) || !strings.HasSuffix(first, "…") {
		t.Errorf("a long note reached the recorder as %d bytes (valid UTF-8: %t), want at most %d ending in …", len(first), utf8.ValidString(first), noteLimit)
	}
	for i := 1; i < kubeQueueSize; i++ {
		if got := <-rec.notes; got != fmt.Sprint(i) {
			t.Fatalf("event %d reached the recorder as %q", i, got)
		}
	}
}
