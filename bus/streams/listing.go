package streams

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
)

// Listed is what a listing says of one stream: enough to tell, without a
// lookup per stream, whether it still is what its component asked for.
type Listed struct {
	Config jetstream.StreamConfig
	// Consumers counts the stream's consumers (a component's stream has
	// one, its durable).
	Consumers int
}

// walkTimeout bounds a whole listing when ctx sets no deadline. The
// client's own default (5 s, for the whole listing, not per page) ended
// listings of 10,000 streams whose fn took a while (found at 10,000 in
// the churn benchmark: 7,420 streams listed, the rest taken as failed).
const walkTimeout = 2 * time.Minute

// Walk lists every stream in the connection's account with its config
// and state, one paged JetStream API call per page of infos, calling fn
// for each as its page arrives (nothing is held for the whole listing).
// A failed listing is a *bus.TransientError; fn may have been called for
// some streams by then.
func (m *Manager) Walk(ctx context.Context, fn func(Listed)) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, walkTimeout)
		defer cancel()
	}
	err := m.call(ctx, func(ctx context.Context) error {
		return m.api.ListStreams(ctx, func(info *jetstream.StreamInfo) {
			fn(Listed{Config: info.Config, Consumers: info.State.Consumers})
		})
	})
	if err != nil {
		return &bus.TransientError{Op: "list streams with their configs", Err: err}
	}
	return nil
}

// Drifted reports whether the live config have differs from want in a
// setting want controls (what EnsureStream would update).
func Drifted(want, have jetstream.StreamConfig) bool {
	return len(streamDiffs(want, have)) > 0
}

// Fingerprint digests a live stream config: a config with the same
// fingerprint as one found not Drifted from a spec is not drifted either,
// so a recheck need not render the spec again to tell.
func Fingerprint(cfg jetstream.StreamConfig) uint64 {
	b, _ := json.Marshal(cfg) // a config the server sent marshals
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}
