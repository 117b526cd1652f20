package deadletter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	api "github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/bus/deadletter"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

const work, consumer = "tinyctl_media_thumbnailer", "tinyctl_media_thumbnailer_worker"

// queue makes a work-queue stream taking replays, its consumer (2
// deliveries) and its dead-letter stream, as render makes them.
func queue(t *testing.T, js jetstream.JetStream) jetstream.Consumer {
	t.Helper()
	ctx := context.Background()
	replay := api.ReplayPrefix(work) + ".>"
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: work, Subjects: []string{"media.thumbnail.>", replay},
		Retention: jetstream.WorkQueuePolicy, SubjectTransform: &jetstream.SubjectTransformConfig{Source: replay, Destination: ">"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: api.StreamName(work),
		Subjects: []string{api.Advisory(work, consumer), api.Subject(work)}}); err != nil {
		t.Fatal(err)
	}
	c, err := js.CreateOrUpdateConsumer(ctx, work, jetstream.ConsumerConfig{Durable: consumer,
		AckPolicy: jetstream.AckExplicitPolicy, MaxDeliver: 2, AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// failEveryDelivery fetches and naks until a fetch finds nothing, and
// says how many deliveries it saw.
func failEveryDelivery(t *testing.T, c jetstream.Consumer) int {
	t.Helper()
	n := 0
	for {
		b, err := c.Fetch(10, jetstream.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for m := range b.Messages() {
			got++
			if err := m.Nak(); err != nil {
				t.Fatal(err)
			}
		}
		if got == 0 {
			return n
		}
		n += got
	}
}

func waitCount(t *testing.T, js jetstream.JetStream, stream string, want uint64) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() error {
		s, err := js.Stream(context.Background(), stream)
		if err != nil {
			return err
		}
		if n := s.CachedInfo().State.Msgs; n != want {
			return fmt.Errorf("stream %s holds %d messages, want %d", stream, n, want)
		}
		return nil
	})
}

func TestASweepMovesWhatUsedUpItsDeliveriesAndAReplayPutsItBack(t *testing.T) {
	s := natstest.Start(t)
	c := natstest.BusConnect(t, s.BusConfig(), nil)
	js := c.JetStream()
	ctx := context.Background()
	cons := queue(t, js)
	msg := nats.NewMsg("media.thumbnail.png")
	msg.Data = []byte(`{"image":"cat.png"}`)
	msg.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "media.thumbnail.gif", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if n := failEveryDelivery(t, cons); n != 4 {
		t.Fatalf("deliveries: got %d, want 4 (2 jobs, 2 each)", n)
	}
	// Two advisories captured, both jobs still in the work queue.
	waitCount(t, js, api.StreamName(work), 2)
	waitCount(t, js, work, 2)

	q := deadletter.New(c)
	moved, err := q.Sweep(ctx, work, consumer)
	if err != nil || moved != 2 {
		t.Fatalf("sweep: moved %d, %v; want 2", moved, err)
	}
	waitCount(t, js, work, 0)
	if again, err := q.Sweep(ctx, work, consumer); err != nil || again != 0 {
		t.Fatalf("second sweep: moved %d, %v; want 0", again, err)
	}

	list, err := q.List(ctx, work, api.ListRequest{})
	if err != nil || list.Total != 2 || len(list.Jobs) != 2 {
		t.Fatalf("list: %+v, %v; want 2 jobs", list, err)
	}
	first := list.Jobs[0]
	if first.Subject != "media.thumbnail.png" || first.Deliveries != 2 || string(first.Data) != `{"image":"cat.png"}` ||
		first.Headers["Traceparent"] == "" || first.Published.IsZero() || first.Died.Before(first.Published) {
		t.Fatalf("first dead job: %+v", first)
	}
	if page, _ := q.List(ctx, work, api.ListRequest{After: first.Sequence, Limit: 5}); len(page.Jobs) != 1 || page.Jobs[0].Subject != "media.thumbnail.gif" {
		t.Fatalf("second page: %+v", page)
	}

	rep, err := q.Replay(ctx, work, api.ReplayRequest{Sequences: []uint64{first.Sequence, 999}})
	if err != nil || rep.Replayed != 1 || len(rep.Missing) != 1 || rep.Missing[0] != 999 {
		t.Fatalf("replay: %+v, %v", rep, err)
	}
	b, err := cons.Fetch(5, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []*jetstream.Msg
	for m := range b.Messages() {
		got = append(got, &m)
		_ = m.Ack()
	}
	if len(got) != 1 {
		t.Fatalf("replayed: fetched %d jobs, want 1", len(got))
	}
	m := *got[0]
	if m.Subject() != "media.thumbnail.png" || string(m.Data()) != `{"image":"cat.png"}` || m.Headers().Get("Traceparent") == "" ||
		m.Headers().Get(api.HeaderSubject) != "" {
		t.Fatalf("replayed job: subject %s, data %s, headers %v", m.Subject(), m.Data(), m.Headers())
	}
	if rest, err := q.Replay(ctx, work, api.ReplayRequest{All: true}); err != nil || rest.Replayed != 1 {
		t.Fatalf("replay all: %+v, %v", rest, err)
	}
	waitCount(t, js, work, 1)
	if left, _ := q.List(ctx, work, api.ListRequest{}); left.Total != 0 || len(left.Jobs) != 0 {
		t.Fatalf("after replaying all: %+v", left)
	}
}

func TestAComponentWithoutDeadLettersSaysSo(t *testing.T) {
	s := natstest.Start(t)
	c := natstest.BusConnect(t, s.BusConfig(), nil)
	q := deadletter.New(c)
	if _, err := q.List(context.Background(), "tinyctl_media_plain", api.ListRequest{}); !errors.Is(err, deadletter.ErrNoStream) {
		t.Fatalf("list without a dead-letter stream: %v, want ErrNoStream", err)
	}
	if _, err := q.Replay(context.Background(), "tinyctl_media_plain", api.ReplayRequest{All: true}); !errors.Is(err, deadletter.ErrNoStream) {
		t.Fatalf("replay without a dead-letter stream: %v, want ErrNoStream", err)
	}
}
