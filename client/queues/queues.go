package queues

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/queue"
	"github.com/tinyctl/tinyctl/bus"
	busqueues "github.com/tinyctl/tinyctl/bus/queues"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/render"
)

// Queue is a component's work queue as the broker the client is connected
// to reports it (api/queue.Figures, the wire form a fleet member's
// controller answers with).
type Queue = queue.Figures

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
	q, err := busqueues.Read(ctx, r.conn, r.prefixes(namespace), render.StreamName(namespace, name), render.ConsumerName(namespace, name))
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
// reached at, in the order to try them: a namespace publisher's import, or
// the control account's (busqueues.Prefixes).
func (r *Reader) prefixes(namespace string) []string {
	if r.scope != "" {
		return []string{identity.QueuesAPIPrefix}
	}
	return busqueues.Prefixes(namespace)
}
