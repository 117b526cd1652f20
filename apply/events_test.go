package apply_test

import (
	"context"
	"errors"
	"testing"

	eventsv1 "k8s.io/api/events/v1"

	"github.com/tinyctl/tinyctl/apply"
)

// countingSink counts the writes that reach it, and those made with the
// context the fence gave (one carrying fenceKey).
type countingSink struct{ writes, fencedCtx int }

// fenceKey marks the contexts the test's fence hands out.
type fenceKey struct{}

func (s *countingSink) count(ctx context.Context) {
	s.writes++
	if ctx.Value(fenceKey{}) != nil {
		s.fencedCtx++
	}
}

func (s *countingSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	s.count(ctx)
	return e, nil
}

func (s *countingSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	s.count(ctx)
	return e, nil
}

func (s *countingSink) Patch(ctx context.Context, e *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	s.count(ctx)
	return e, nil
}

func TestFencedEventsWritesOnlyWithinTheLease(t *testing.T) {
	leading := true
	var deadlines int
	within := func(ctx context.Context) (context.Context, context.CancelFunc, error) {
		if !leading {
			return ctx, func() {}, errors.New("not the leader")
		}
		deadlines++
		ctx, cancel := context.WithCancel(context.WithValue(ctx, fenceKey{}, true))
		return ctx, cancel, nil
	}
	sink := &countingSink{}
	fenced := apply.FencedEvents(sink, within)
	e := &eventsv1.Event{Reason: "Created"}
	ctx := context.Background()
	if got, err := fenced.Create(ctx, e); err != nil || got != e {
		t.Fatalf("Create while leading = %v, %v; want the event written", got, err)
	}
	if _, err := fenced.Patch(ctx, e, []byte("{}")); err != nil {
		t.Fatalf("Patch while leading: %v", err)
	}
	leading = false
	for name, write := range map[string]func() (*eventsv1.Event, error){
		"Create": func() (*eventsv1.Event, error) { return fenced.Create(ctx, e) },
		"Update": func() (*eventsv1.Event, error) { return fenced.Update(ctx, e) },
		"Patch":  func() (*eventsv1.Event, error) { return fenced.Patch(ctx, e, []byte("{}")) },
	} {
		// Dropped as if written: an error would make client-go's broadcaster retry it.
		if got, err := write(); got != nil || err != nil {
			t.Errorf("%s past the lease = %v, %v; want nil, nil (dropped)", name, got, err)
		}
	}
	if sink.writes != 2 || deadlines != 2 || sink.fencedCtx != 2 {
		t.Errorf("sink saw %d writes within %d deadlines, %d of them with the fence's context; want 2, 2 and 2 (none past the lease, each bounded by it)",
			sink.writes, deadlines, sink.fencedCtx)
	}
}
