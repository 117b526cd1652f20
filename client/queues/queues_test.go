package queues_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/client/queues"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// TestReadCountsWhatTheQueueHolds: two jobs published, one fetched and not
// settled, on a stream and consumer named as a controller names them.
// The admin publisher's permissions read them; a worker of another
// component is refused, and credentials
// scoped to one namespace are refused another's.
func TestReadCountsWhatTheQueueHolds(t *testing.T) {
	pub := identity.Publisher(identity.DefaultBuckets())
	worker := identity.Worker(identity.DefaultAPIPrefix, "tinyctl_media_other", "tinyctl_media_other_worker", "_INBOX_w", nil)
	s := natstest.Start(t, natstest.WithUsers(
		natstest.User{Name: "admin", Password: "a", Permissions: natstest.Permissions{PublishAllow: pub.Publish, SubscribeAllow: pub.Subscribe}},
		natstest.User{Name: "worker", Password: "w", Permissions: natstest.Permissions{PublishAllow: worker.Publish, SubscribeAllow: []string{"_INBOX.>"}}},
	))
	ctx := testenv.Ctx(t, 30*time.Second)
	js, err := jetstream.New(s.Connect(t))
	testenv.Must(t, err)
	stream, consumer := render.StreamName("media", "resizer"), render.ConsumerName("media", "resizer")
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{"media.resize.>"}, Retention: jetstream.WorkQueuePolicy})
	testenv.Must(t, err)
	cons, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: consumer, AckPolicy: jetstream.AckExplicitPolicy, MaxDeliver: 3})
	testenv.Must(t, err)
	for _, job := range []string{"a", "b"} {
		_, err := js.Publish(ctx, "media.resize."+job, []byte(job))
		testenv.Must(t, err)
	}
	b, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	testenv.Must(t, err)
	for range b.Messages() {
	}

	read := func(user, password, scope, ns, name string) (queues.Queue, error) {
		nc := s.Connect(t, nats.UserInfo(user, password))
		r, err := queues.New(nc, scope)
		testenv.Must(t, err)
		return r.Read(ctx, ns, name)
	}
	q, err := read("admin", "a", "", "media", "resizer")
	testenv.Must(t, err)
	if q.Jobs != 2 || q.Pending != 1 || q.AckPending != 1 || q.Redelivered != 0 || q.MaxDeliver != 3 || q.Oldest.IsZero() || q.NoConsumer ||
		q.Stream != stream || q.Consumer != consumer {
		t.Errorf("queue %+v, want 2 jobs, 1 pending, 1 ack pending, max deliver 3, an oldest time", q)
	}
	if _, err := read("admin", "a", "", "media", "nope"); !errors.Is(err, queues.ErrNotFound) {
		t.Errorf("a component without a stream: %v, want ErrNotFound", err)
	}
	// (A refusal the client did not see would end at the deadline instead.)
	if _, err := read("worker", "w", "", "media", "resizer"); !errors.Is(err, queues.ErrNoAccess) {
		t.Errorf("another component's worker: %v, want ErrNoAccess", err)
	}
	if _, err := read("admin", "a", "search", "media", "resizer"); !errors.Is(err, queues.ErrNoAccess) {
		t.Errorf("credentials scoped to namespace search: %v, want ErrNoAccess", err)
	}
	if _, err := read("admin", "a", "", "Media", "resizer"); err == nil {
		t.Error("a namespace that is not a DNS label was read")
	}
}
