package serve

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/bus/status"
)

// watchClusters exports, every heartbeat TTL until ctx ends, which clusters
// are stale: they have status records in the bucket but no live heartbeat,
// the same judgement `tinyctl status` makes. Every replica of every
// cluster reports it, so a stopped cluster is seen by the others.
func (p *Process) watchClusters(ctx context.Context) {
	tick := time.NewTicker(p.cfg.HeartbeatTTL)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, p.cfg.HeartbeatTTL)
		recs, err := p.statuses.List(rctx)
		cancel()
		if err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Msg("list status records for stale clusters")
			continue
		}
		p.metrics.setStaleClusters(staleClusters(recs))
	}
}

// staleClusters maps every cluster named by a status record to whether its
// heartbeat is stale.
func staleClusters(recs []status.Record) map[string]bool {
	out := map[string]bool{}
	for _, r := range recs {
		out[r.Cluster] = out[r.Cluster] || r.Stale
	}
	return out
}
