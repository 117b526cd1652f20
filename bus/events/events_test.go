package events_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/events"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestEventsAreKeptPerComponentAndReadBySubject publishes events of two
// components on a real server and reads them back as the CLI does: one
// component's alone and in order, only the newest PerComponent of each,
// none older than Since, and a watch that hears a new one after the
// stored ones.
func TestEventsAreKeptPerComponentAndReadBySubject(t *testing.T) {
	s := natstest.Start(t)
	c := natstest.BusConnect(t, s.BusConfig(), nil)
	ctx := testenv.Ctx(t, 30*time.Second)

	if err := events.Read(ctx, c, events.ReadOptions{}, func(event.Event) error { return nil }); !errors.Is(err, events.ErrNoStream) {
		t.Fatalf("Read before any controller ran = %v, want ErrNoStream", err)
	}
	testenv.Must(t, events.Ensure(ctx, c, events.StreamConfig{PerComponent: 2}))
	testenv.Must(t, events.Ensure(ctx, c, events.StreamConfig{PerComponent: 50})) // kept as it is

	pub := events.NewPublisher(c)
	start := time.Now()
	for i, comp := range []string{"media.thumbs", "media.thumbs", "media.thumbs", "search.index"} {
		testenv.Must(t, pub.Publish(event.Event{Time: start, Cluster: "east", Component: comp, Revision: uint64(i + 1),
			Type: event.Normal, Reason: "Created", Message: fmt.Sprint(i + 1)}))
	}
	waitStored(t, c, 3) // 2 of media.thumbs (the first is dropped), 1 of search.index

	read := func(opts events.ReadOptions) []string {
		var got []string
		testenv.Must(t, events.Read(ctx, c, opts, func(e event.Event) error {
			got = append(got, fmt.Sprintf("%s@%d", e.Component, e.Revision))
			return nil
		}))
		return got
	}
	if got := fmt.Sprint(read(events.ReadOptions{Filter: event.Filter("media", "thumbs")})); got != "[media.thumbs@2 media.thumbs@3]" {
		t.Errorf("media/thumbs' events = %s, want the newest two, in order", got)
	}
	if got := fmt.Sprint(read(events.ReadOptions{Filter: event.Filter("search", "")})); got != "[search.index@4]" {
		t.Errorf("namespace search's events = %s, want search.index@4", got)
	}
	if got := read(events.ReadOptions{Since: time.Now().Add(time.Hour)}); len(got) != 0 {
		t.Errorf("events since an hour from now = %v, want none", got)
	}

	// A watch: the stored events, then CaughtUp, then a new one.
	seen, caught := make(chan string, 10), make(chan struct{})
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- events.Read(wctx, c, events.ReadOptions{Filter: event.Filter("search", ""), Watch: true,
			CaughtUp: func() { close(caught) }}, func(e event.Event) error {
			seen <- fmt.Sprintf("%s@%d", e.Component, e.Revision)
			return nil
		})
	}()
	if got := <-seen; got != "search.index@4" {
		t.Errorf("the watch's first event = %s, want search.index@4", got)
	}
	<-caught
	testenv.Must(t, pub.Publish(event.Event{Time: time.Now(), Cluster: "east", Component: "search.index", Revision: 5, Type: event.Warning, Reason: "InvalidSpec"}))
	select {
	case got := <-seen:
		if got != "search.index@5" {
			t.Errorf("the watch's new event = %s, want search.index@5", got)
		}
	case <-ctx.Done():
		t.Fatal("the watch heard no new event")
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("a watch ended by its context returned %v, want nil", err)
	}
}

// waitStored waits until the events stream holds n messages.
func waitStored(t *testing.T, c *bus.Conn, n uint64) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() error {
		st, err := c.JetStream().Stream(context.Background(), event.Stream)
		if err != nil {
			return err
		}
		if got := st.CachedInfo().State.Msgs; got != n {
			return fmt.Errorf("the events stream holds %d messages, want %d", got, n)
		}
		return nil
	})
}

// TestTheStreamSetsNoStoreAsideAndKeepsLongEvents: the events stream
// reserves no bytes of the store (a byte limit would be set aside from it
// at creation), and an event with a message longer than a stored event
// may be is kept, its message shortened.
func TestTheStreamSetsNoStoreAsideAndKeepsLongEvents(t *testing.T) {
	s := natstest.Start(t)
	c := natstest.BusConnect(t, s.BusConfig(), nil)
	ctx := testenv.Ctx(t, 30*time.Second)
	testenv.Must(t, events.Ensure(ctx, c, events.StreamConfig{}))
	st, err := c.JetStream().Stream(ctx, event.Stream)
	testenv.Must(t, err)
	if cfg := st.CachedInfo().Config; cfg.MaxBytes != -1 || cfg.MaxMsgs != events.DefaultMaxEvents || cfg.MaxMsgSize != events.MaxEventBytes {
		t.Errorf("events stream: max bytes %d, max msgs %d, max msg size %d; want no byte limit, %d events of at most %d bytes",
			cfg.MaxBytes, cfg.MaxMsgs, cfg.MaxMsgSize, events.DefaultMaxEvents, events.MaxEventBytes)
	}
	long := strings.Repeat("é", events.MaxEventBytes) // two bytes each
	testenv.Must(t, events.NewPublisher(c).Publish(event.Event{Time: time.Now(), Cluster: "east", Component: "media.thumbs",
		Revision: 1, Type: event.Warning, Reason: "InvalidSpec", Message: long}))
	waitStored(t, c, 1)
	var got event.Event
	testenv.Must(t, events.Read(ctx, c, events.ReadOptions{}, func(e event.Event) error { got = e; return nil }))
	if !utf8.ValidString(got.Message) || !strings.HasSuffix(got.Message, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got.Message, "…")) {
		t.Errorf("the long event's message came back as %d bytes, valid UTF-8 %v; want a prefix of the original ending in …", len(got.Message), utf8.ValidString(got.Message))
	}
}
