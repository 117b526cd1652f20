package queues

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/render"
)

// Queue is a component's work queue as the broker the client is connected
// to reports it: its stream (the jobs not yet acknowledged) and its
// worker's durable consumer.
type Queue struct {
	Stream, Consumer string
	// Jobs and Bytes are what the stream holds: every job not yet
	// acknowledged (a work queue removes a job when it is acked or
	// terminated).
	Jobs, Bytes uint64
	// Oldest is when the oldest job in the stream was published (zero
	// when the stream is empty).
	Oldest time.Time
	// Pending is how many jobs no worker has been handed yet.
	Pending uint64
	// AckPending is how many were handed to a worker and not yet settled;
	// Redelivered how many of those were handed out more than once.
	AckPending, Redelivered int
	// Waiting is how many pull requests of workers wait for jobs.
	Waiting int
	// MaxDeliver is the consumer's limit on deliveries (-1: none).
	MaxDeliver int
	// NoConsumer says the stream exists and its consumer does not (a
	// controller still creating it, or a stream kept after a delete).
	NoConsumer bool
	// DeadLetters says the component has a dead-letter stream
	// (spec.jobs.deadLetter); Dead is how many jobs it holds
	// (`tinyctl jobs dead`), and the advisories not yet moved.
	DeadLetters bool
	Dead        uint64
}

// ErrNotFound matches (errors.Is) the error Read returns when the
// component's stream is not on the broker; it is client.ErrNotFound.
var ErrNotFound = bus.ErrNotFound

// ErrNoAccess matches (errors.Is) the error Read returns when the
// credentials may not read stream and consumer info: a namespace
// publisher's minted before queues could be read, or a worker's.
var ErrNoAccess = errors.New("these credentials may not read queue figures")

// Reader reads the work queues of components on one connection.
type Reader struct {
	conn *bus.Conn
	// scope is the one namespace the credentials may read ("": all).
	scope string
}

// New reads queues on nc, which stays the caller's (New adds to its
// error handler, to fail a refused request at once: make one Reader per
// connection). scope is the namespace a namespace publisher's credentials
// are confined to (client.Client.Namespace), "" for the others.
func New(nc *nats.Conn, scope string) (*Reader, error) {
	conn, err := bus.Wrap(nc, "")
	if err != nil {
		return nil, err
	}
	return &Reader{conn: conn, scope: scope}, nil
}

// Read reads the stream and consumer of component namespace/name on the
// broker the connection reaches: with accounts (tinyctl install's jwt
// mode) through what the credentials' account imports of the namespace's
// jobs account, otherwise with the JetStream API itself. It returns
// ErrNotFound when the stream does not exist there (not reconciled yet, or
// a fleet hub whose members run the component), and ErrNoAccess when the
// credentials may not ask.
func (r *Reader) Read(ctx context.Context, namespace, name string) (Queue, error) {
	key := api.Key(namespace, name)
	if _, _, err := api.ParseKey(key); err != nil {
		return Queue{}, err
	}
	if r.scope != "" && namespace != r.scope {
		return Queue{}, fmt.Errorf("queue of %s: %w (they are scoped to namespace %q)", key, ErrNoAccess, r.scope)
	}
	q := Queue{Stream: render.StreamName(namespace, name), Consumer: render.ConsumerName(namespace, name)}
	var err error
	for _, prefix := range r.prefixes(namespace) {
		err = r.conn.Guarded(ctx, []string{prefix + ".>"}, func(ctx context.Context) error { return r.read(ctx, prefix, &q) })
		if !errors.Is(err, nats.ErrNoResponders) {
			break
		}
	}
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return Queue{}, fmt.Errorf("queue of %s: stream %s: %w on this broker", key, q.Stream, ErrNotFound)
	case errors.Is(err, nats.ErrNoResponders):
		return Queue{}, fmt.Errorf("queue of %s: no JetStream API answered (JetStream off, or an account that imports no queue info: a controller older than the CLI)", key)
	case errors.Is(err, bus.ErrPermissionDenied) && r.scope != "":
		return Queue{}, fmt.Errorf("queue of %s: %w (minted before they could: mint them again with tinyctl identity publisher %s)", key, ErrNoAccess, r.scope)
	case errors.Is(err, bus.ErrPermissionDenied):
		return Queue{}, fmt.Errorf("queue of %s: %w (an admin publisher minted before they could: run tinyctl install again, which mints Secret tinyctl-publisher anew)", key, ErrNoAccess)
	case err != nil:
		return Queue{}, fmt.Errorf("queue of %s: %w", key, err)
	}
	return q, nil
}

// prefixes are the JetStream API prefixes a namespace's queues may be
// reached at, in the order to try them: a namespace publisher's import; the
// control account's import of the namespace's jobs account, then the API
// itself (one account: no one answers at the import).
func (r *Reader) prefixes(namespace string) []string {
	if r.scope != "" {
		return []string{identity.QueuesAPIPrefix}
	}
	return []string{identity.NamespaceAPIPrefix(namespace), identity.DefaultAPIPrefix}
}

// read fills q from the stream and consumer info at prefix.
func (r *Reader) read(ctx context.Context, prefix string, q *Queue) error {
	js, err := jetstream.NewWithAPIPrefix(r.conn.NATS(), prefix)
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
