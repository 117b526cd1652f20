package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"

	"github.com/rs/zerolog"
	"k8s.io/client-go/rest"

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

// nameConflicts looks, before each beat, for another cluster beating
// under this cluster's name: in the local heartbeat bucket (two clusters
// sharing one NATS) and, for a fleet member, at the hub (a name already
// used there). It reports what it found in the heartbeat, the metric and
// the log (when it changes).
type nameConflicts struct {
	statuses *status.Store
	hub      func(ctx context.Context, own status.Heartbeat) (string, error) // nil: no hub
	metrics  *metrics
	last     string
	lastErr  string
}

func (n *nameConflicts) refresh(ctx context.Context, hb *status.Heartbeat) {
	own := *hb
	found, err := n.statuses.NameConflict(ctx, own)
	if found == "" && err == nil && n.hub != nil {
		found, err = n.hub(ctx, own)
	}
	log := zerolog.Ctx(ctx)
	if err != nil {
		// Logged once per distinct failure: a hub cut off answers nothing
		// for as long as the cut lasts.
		if err.Error() != n.lastErr {
			log.Warn().Err(err).Msg("could not look for another cluster under this cluster's name; keeping what the last look found")
		}
		n.lastErr = err.Error()
		return
	}
	n.lastErr = ""
	hb.Conflict = found
	boolGauge(n.metrics.nameConflict, found != "")
	switch {
	case found != "" && found != n.last:
		log.Error().Str("conflict", found).Msg("another cluster uses this cluster's name")
	case found == "" && n.last != "":
		log.Info().Msg("no other cluster uses this cluster's name any more")
	}
	n.last = found
}
