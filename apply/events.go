package apply

import (
	"context"

	eventsv1 "k8s.io/api/events/v1"
	kevents "k8s.io/client-go/tools/events"
)

// Within bounds a write: it returns the context the write runs in (with
// the writer's deadline) or an error when the writer may not write now.
type Within func(context.Context) (context.Context, context.CancelFunc, error)

// FencedEvents returns an EventSink that writes Kubernetes Events through
// sink only within, as the loop's writes are bounded by the lease: a
// leader paused past its lease (SIGSTOP, a frozen VM) resumes with events
// queued from before the pause and must not write them after a newer
// leader took over. Refused events are dropped as written (nil, nil), so
// client-go's broadcaster neither logs nor retries them.
func FencedEvents(sink kevents.EventSink, within Within) kevents.EventSink {
	return fencedEvents{sink: sink, within: within}
}

type fencedEvents struct {
	sink   kevents.EventSink
	within Within
}

func (f fencedEvents) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return fenced(ctx, f.within, func(ctx context.Context) (*eventsv1.Event, error) { return f.sink.Create(ctx, e) })
}

func (f fencedEvents) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return fenced(ctx, f.within, func(ctx context.Context) (*eventsv1.Event, error) { return f.sink.Update(ctx, e) })
}

func (f fencedEvents) Patch(ctx context.Context, old *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	return fenced(ctx, f.within, func(ctx context.Context) (*eventsv1.Event, error) { return f.sink.Patch(ctx, old, data) })
}

func fenced(ctx context.Context, within Within, write func(context.Context) (*eventsv1.Event, error)) (*eventsv1.Event, error) {
	ctx, cancel, err := within(ctx)
	if cancel != nil {
		defer cancel()
	}
	if err != nil {
		return nil, nil
	}
	return write(ctx)
}
