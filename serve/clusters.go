package serve

import (
	"context"
	"time"

	"github.com/rs/zerolog"
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
		stale, err := p.statuses.Clusters(rctx)
		cancel()
		if err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Msg("list status records for stale clusters")
			continue
		}
		p.metrics.setStaleClusters(stale)
	}
}
