package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/queue"
	"github.com/tinyctl/tinyctl/bus/queues"
	"github.com/tinyctl/tinyctl/render"
)

// queueFiguresTimeout bounds one answer's reads.
const queueFiguresTimeout = 4 * time.Second

// serveQueueFigures, while this process leads, answers the queue-figure
// requests for this cluster (api/queue): a fleet hub holds no work queue
// and asks each member's controller, which reads its own broker as
// `tinyctl describe` would there. The returned func stops it.
func (p *Process) serveQueueFigures(ctx context.Context) (func(), error) {
	cluster := p.cfg.Loop.Cluster.Name
	prefix := queue.Prefix(cluster)
	sub, err := p.conn.NATS().QueueSubscribe(prefix+"*.*", "tinyctl-controller", func(m *nats.Msg) {
		ns, name, _ := strings.Cut(strings.TrimPrefix(m.Subject, prefix), ".")
		ctx, cancel := context.WithTimeout(ctx, queueFiguresTimeout)
		defer cancel()
		b, _ := json.Marshal(p.queueFigures(ctx, cluster, ns, name))
		if err := m.Respond(b); err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Str("subject", m.Subject).Msg("answer a queue-figures request")
		}
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe to queue-figure requests: %w", err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

// queueFigures is the answer for component ns/name: its queue on this
// cluster's broker, NotFound when the broker holds no stream of it.
func (p *Process) queueFigures(ctx context.Context, cluster, ns, name string) queue.Reply {
	if _, _, err := api.ParseKey(api.Key(ns, name)); err != nil {
		return queue.Reply{Cluster: cluster, Error: err.Error()}
	}
	q, err := queues.Read(ctx, p.conn, queues.Prefixes(ns), render.StreamName(ns, name), render.ConsumerName(ns, name))
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return queue.Reply{Cluster: cluster, NotFound: true}
	case err != nil:
		return queue.Reply{Cluster: cluster, Error: err.Error()}
	}
	return queue.Reply{Cluster: cluster, Figures: &q}
}
