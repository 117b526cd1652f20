package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// heartbeatMarkerTTL is how long the server keeps the marker it writes
// when a heartbeat expires, so watchers of the heartbeat bucket see it.
const heartbeatMarkerTTL = time.Minute

// Heartbeat is a cluster controller's sign of life, stored as JSON under
// the cluster's name in the heartbeat bucket. The server removes it TTL
// after it was written; readers also judge it by time (HeartbeatStale).
type Heartbeat struct {
	Cluster    string    `json:"cluster"`
	Controller string    `json:"controller,omitempty"`
	TTLSeconds int64     `json:"ttlSeconds"`
	SentAt     time.Time `json:"sentAt"`
}

// TTL is how long the heartbeat counts as live after it was written.
func (h Heartbeat) TTL() time.Duration { return time.Duration(h.TTLSeconds) * time.Second }

// HeartbeatRecord is a Heartbeat as read back, with the server's time of
// the write.
type HeartbeatRecord struct {
	Heartbeat
	Revision uint64
	Received time.Time
}

// HeartbeatStale reports whether a cluster whose latest heartbeat is hb
// (nil: none) must be treated as not live at time now: no heartbeat, or
// one older than its TTL. It compares the server's write time with now, so
// it assumes the reader's clock is close to the server's (see
// docs/status.md); the server's own expiry of the record needs no clock
// agreement and makes hb nil soon after.
func HeartbeatStale(hb *HeartbeatRecord, now time.Time) bool {
	return hb == nil || now.Sub(hb.Received) > hb.TTL()
}

func heartbeatBucketConfig(cfg StatusConfig) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:         orDefault(cfg.HeartbeatBucket, DefaultHeartbeatBucket),
		Replicas:       cfg.Replicas,
		Storage:        cfg.Storage,
		LimitMarkerTTL: heartbeatMarkerTTL,
	}
}

// wholeSeconds returns ttl truncated to whole seconds, the server's
// resolution for message TTLs; less than one second is an error.
func wholeSeconds(ttl time.Duration) (time.Duration, error) {
	if ttl < time.Second {
		return 0, fmt.Errorf("bus: ttl %s is under the server's minimum of 1s", ttl)
	}
	return ttl.Truncate(time.Second), nil
}

// Beat writes a heartbeat for cluster that the server removes after ttl
// (whole seconds, at least 1s). controller names the writer (a pod name,
// say). It returns the heartbeat's revision.
func (s *StatusStore) Beat(ctx context.Context, cluster, controller string, ttl time.Duration) (uint64, error) {
	if !validToken(cluster) {
		return 0, fmt.Errorf("bus: cluster name %q is not a single subject token", cluster)
	}
	ttl, err := wholeSeconds(ttl)
	if err != nil {
		return 0, err
	}
	data, err := json.Marshal(Heartbeat{
		Cluster: cluster, Controller: controller, TTLSeconds: int64(ttl / time.Second), SentAt: s.now().UTC(),
	})
	if err != nil {
		return 0, fmt.Errorf("bus: encode heartbeat: %w", err)
	}
	return s.heartbeats.write(ctx, cluster, data, OpPut, nil, ttl)
}

// Heartbeat returns the latest heartbeat of cluster, or ErrNotFound when
// it has none or it has expired on the server.
func (s *StatusStore) Heartbeat(ctx context.Context, cluster string) (HeartbeatRecord, error) {
	e, err := s.heartbeats.latest(ctx, cluster)
	if err == nil && e.Op != OpPut {
		err = classify("get heartbeat "+cluster, jetstream.ErrKeyDeleted)
	}
	if err != nil {
		return HeartbeatRecord{}, err
	}
	return decodeHeartbeat(e)
}

// Heartbeats returns the heartbeats the server still holds, by cluster.
func (s *StatusStore) Heartbeats(ctx context.Context) (map[string]HeartbeatRecord, error) {
	entries, err := s.heartbeats.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]HeartbeatRecord, len(entries))
	for _, e := range entries {
		hb, err := decodeHeartbeat(e)
		if err != nil {
			return nil, err
		}
		out[e.Key] = hb
	}
	return out, nil
}

func decodeHeartbeat(e Entry) (HeartbeatRecord, error) {
	var hb Heartbeat
	if err := json.Unmarshal(e.Value, &hb); err != nil {
		return HeartbeatRecord{}, fmt.Errorf("bus: decode heartbeat %s: %w", e.Key, err)
	}
	return HeartbeatRecord{Heartbeat: hb, Revision: e.Revision, Received: e.Created}, nil
}

// HeartbeatOptions configure RunHeartbeat.
type HeartbeatOptions struct {
	Cluster    string
	Controller string
	// Interval between beats; it must be shorter than TTL (a third of it
	// is a good choice).
	Interval time.Duration
	TTL      time.Duration
	// OnError, if set, receives each failed beat; beating goes on.
	OnError func(error)
}

// RunHeartbeat beats at once and then every Interval until ctx is done,
// and returns ctx's error. A failed beat is reported to OnError and the
// next one is tried on schedule. Invalid options return an error at once.
func (s *StatusStore) RunHeartbeat(ctx context.Context, opts HeartbeatOptions) error {
	if opts.Interval <= 0 || opts.Interval >= opts.TTL {
		return fmt.Errorf("bus: heartbeat interval %s must be positive and under the ttl %s", opts.Interval, opts.TTL)
	}
	if _, err := wholeSeconds(opts.TTL); err != nil {
		return err
	}
	if !validToken(opts.Cluster) {
		return fmt.Errorf("bus: cluster name %q is not a single subject token", opts.Cluster)
	}
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	for {
		_, err := s.Beat(ctx, opts.Cluster, opts.Controller, opts.TTL)
		if err != nil && ctx.Err() == nil && opts.OnError != nil {
			opts.OnError(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
