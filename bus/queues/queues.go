// Package queues reads a component's work queue on a broker: the jobs its
// stream holds and the oldest one's age, its worker consumer's pending,
// ack-pending and redelivered counts, and its dead letters, through the
// JetStream API prefixes an account reaches them at. It changes nothing.
// client/queues gives the figures to users; serve answers a fleet hub's
// requests for them (api/queue) with it.
package queues

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/api/queue"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/identity"
)

// Prefixes are where the control account (the controller, the admin
// publisher) reaches namespace ns's queues, in the order to try them: its
// import of ns's jobs account, then the JetStream API itself (one account:
// no one answers at the import).
func Prefixes(ns string) []string {
	return []string{identity.NamespaceAPIPrefix(ns), identity.DefaultAPIPrefix}
}

// Read reads the queue of work-queue stream and its worker's durable
// consumer (a component's render.StreamName and render.ConsumerName) at the
// first of prefixes where a JetStream API answers. Its errors are the broker's:
// jetstream.ErrStreamNotFound when the stream is not there,
// nats.ErrNoResponders when no prefix answered, bus.ErrPermissionDenied
// when the credentials may not ask.
func Read(ctx context.Context, conn *bus.Conn, prefixes []string, stream, consumer string) (queue.Figures, error) {
	q := queue.Figures{Stream: stream, Consumer: consumer}
	var err error
	for _, prefix := range prefixes {
		err = conn.Guarded(ctx, []string{prefix + ".>"}, func(ctx context.Context) error { return read(ctx, conn, prefix, &q) })
		if !errors.Is(err, nats.ErrNoResponders) {
			break
		}
	}
	return q, err
}

// read fills q from the stream and consumer info at prefix.
func read(ctx context.Context, conn *bus.Conn, prefix string, q *queue.Figures) error {
	js, err := jetstream.NewWithAPIPrefix(conn.NATS(), prefix)
	if err != nil {
		return err
	}
	s, err := js.Stream(ctx, q.Stream)
	if err != nil {
		return err
	}
	st := s.CachedInfo().State
	q.Jobs, q.Bytes = st.Msgs, st.Bytes
	if st.Msgs > 0 {
		q.Oldest = st.FirstTime
	}
	cons, err := s.Consumer(ctx, q.Consumer)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		q.NoConsumer = true
		return nil
	}
	if err != nil {
		return err
	}
	ci := cons.CachedInfo()
	q.Pending, q.AckPending, q.Redelivered, q.Waiting = ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.NumWaiting
	q.MaxDeliver = ci.Config.MaxDeliver
	dead, err := js.Stream(ctx, deadletter.StreamName(q.Stream))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	q.DeadLetters, q.Dead = true, dead.CachedInfo().State.Msgs
	return nil
}
