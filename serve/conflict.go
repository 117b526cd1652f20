package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus/status"
)

// clusterID tells Kubernetes clusters apart without any permission: a
// digest of the API server's CA, which every controller of one cluster
// trusts (in the pod or through a kubeconfig) and no other cluster's API
// server shares. An API server reached without a CA (insecure, or a system
// trust store) is told apart by its URL instead.
func clusterID(cfg *rest.Config) string {
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		ca, _ = os.ReadFile(cfg.CAFile)
	}
	if len(ca) == 0 {
		ca = []byte(cfg.Host)
	}
	sum := sha256.Sum256(ca)
	return hex.EncodeToString(sum[:6])
}

// nameConflicts looks, on its own schedule, for another cluster beating
// under this cluster's name: in the local heartbeat bucket (two clusters
// sharing one NATS) and, for a fleet member, at the hub (a name already
// used there). It reports what it last found in each heartbeat, the metric
// and the log (when it changes). The looks run beside the heartbeat, not
// before each beat: a hub that answers slowly (through a loaded leafnode,
// seconds) must neither delay a beat nor be cut short by a beat's budget.
type nameConflicts struct {
	statuses *status.Store
	hub      func(ctx context.Context, own cluster.Heartbeat) (string, error) // nil: no hub
	metrics  *metrics
	lastErr  string

	mu   sync.Mutex
	last string
}

// minLook is the least time one look may take: a hub's heartbeat is read
// across the leafnode, its stream looked up first.
const minLook = 5 * time.Second

// run looks every interval (each look given at least minLook) until ctx
// ends.
func (n *nameConflicts) run(ctx context.Context, own cluster.Heartbeat, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, max(every, minLook))
		n.look(lctx, own)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// current is what the last look that succeeded found ("" for none).
func (n *nameConflicts) current() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.last
}

func (n *nameConflicts) look(ctx context.Context, own cluster.Heartbeat) {
	found, err := n.statuses.NameConflict(ctx, own)
	if found == "" && err == nil && n.hub != nil {
		found, err = n.hub(ctx, own)
	}
	log := zerolog.Ctx(ctx)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return // stopping
		}
		// Logged once per distinct failure: a hub cut off answers nothing
		// for as long as the cut lasts.
		if err.Error() != n.lastErr {
			log.Warn().Err(err).Msg("could not look for another cluster under this cluster's name; keeping what the last look found")
		}
		n.lastErr = err.Error()
		return
	}
	n.lastErr = ""
	boolGauge(n.metrics.nameConflict, found != "")
	last := n.current()
	switch {
	case found != "" && found != last:
		log.Error().Str("conflict", found).Msg("another cluster uses this cluster's name")
	case found == "" && last != "":
		log.Info().Msg("no other cluster uses this cluster's name any more")
	}
	n.mu.Lock()
	n.last = found
	n.mu.Unlock()
}
