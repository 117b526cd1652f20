package apply_test

import (
	"context"
	"errors"
	"testing"

	eventsv1 "k8s.io/api/events/v1"

	"github.com/tinyctl/tinyctl/apply"
)

// countingSink counts the writes that reach it.
type countingSink struct{ writes int }

func (s *countingSink) Create(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	s.writes++
	return e, nil
}

func (s *countingSink) Update(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	s.writes++
	return e, nil
}

func (s *countingSink) Patch(_ context.Context, e *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	s.writes++
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
		ctx, cancel := context.WithCancel(ctx)
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
	if sink.writes != 2 || deadlines != 2 {
		t.Errorf("sink saw %d writes within %d deadlines, want 2 and 2 (none past the lease)", sink.writes, deadlines)
	}
}
