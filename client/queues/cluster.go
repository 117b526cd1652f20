package queues

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/queue"
	"github.com/tinyctl/tinyctl/bus"
)

// askTimeout bounds one cluster's answer: a member cut off from the hub
// does not answer at all, and describe asks every cluster in turn.
const askTimeout = 5 * time.Second

// ErrNoAnswer matches (errors.Is) the error OnCluster returns when no
// controller of the cluster answered, or none in time: asking again for
// another component of that cluster would only wait again.
var ErrNoAnswer = errors.New("no answer")

// OnCluster asks the controller of cluster for component namespace/name's
// queue on that cluster's broker (api/queue): what a fleet hub, which
// holds no queue of its own, shows per member. It returns ErrNotFound when
// that broker holds no stream of the component, and an error saying so
// when no controller of cluster answers (its link to the hub is down, or
// it runs a tinyctl older than the CLI).
func (r *Reader) OnCluster(ctx context.Context, cluster, namespace, name string) (Queue, error) {
	key := api.Key(namespace, name)
	if _, _, err := api.ParseKey(key); err != nil {
		return Queue{}, err
	}
	if !bus.IsToken(cluster) {
		return Queue{}, fmt.Errorf("queue of %s: cluster name %q is not a single subject token", key, cluster)
	}
	if r.scope != "" {
		return Queue{}, fmt.Errorf("queue of %s on %s: %w (a namespace publisher reads the queues of the broker it reaches only)", key, cluster, ErrNoAccess)
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	subject := queue.Subject(cluster, namespace, name)
	var msg *nats.Msg
	err := r.conn.Guarded(ctx, []string{subject}, func(ctx context.Context) (err error) {
		msg, err = r.conn.NATS().RequestWithContext(ctx, subject, nil)
		return err
	})
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return Queue{}, fmt.Errorf("queue of %s on %s: %w: no controller of cluster %s answered (its link to this broker is down, or it runs an older tinyctl)", key, cluster, ErrNoAnswer, cluster)
	case errors.Is(err, context.DeadlineExceeded):
		return Queue{}, fmt.Errorf("queue of %s on %s: %w: cluster %s did not answer within %s", key, cluster, ErrNoAnswer, cluster, askTimeout)
	case errors.Is(err, bus.ErrPermissionDenied):
		return Queue{}, fmt.Errorf("queue of %s on %s: %w (an admin publisher minted before they could: run tinyctl install again)", key, cluster, ErrNoAccess)
	case err != nil:
		return Queue{}, fmt.Errorf("queue of %s on %s: %w", key, cluster, err)
	}
	var reply queue.Reply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return Queue{}, fmt.Errorf("queue of %s on %s: unreadable answer: %w", key, cluster, err)
	}
	switch {
	case reply.Cluster != cluster:
		// A member's leafnode user may subscribe to another cluster's
		// subject (docs/fleet.md#permissions-on-the-link).
		return Queue{}, fmt.Errorf("queue of %s on %s: answered as cluster %q: not shown", key, cluster, reply.Cluster)
	case reply.Error != "":
		return Queue{}, fmt.Errorf("queue of %s on %s: %s", key, cluster, reply.Error)
	case reply.NotFound:
		return Queue{}, fmt.Errorf("queue of %s on %s: %w there", key, cluster, ErrNotFound)
	case reply.Figures == nil:
		return Queue{}, fmt.Errorf("queue of %s on %s: the answer holds no figures", key, cluster)
	}
	return *reply.Figures, nil
}
