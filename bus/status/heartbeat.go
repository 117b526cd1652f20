package status

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// heartbeatMarkerTTL is how long the server keeps the marker it writes
// when a heartbeat expires, so watchers of the heartbeat bucket see it.
const heartbeatMarkerTTL = time.Minute

// HeartbeatRecord is a heartbeat as read back, with the server's time of
// the write.
type HeartbeatRecord struct {
	cluster.Heartbeat
	Revision uint64
	Received time.Time
}

// Stale reports whether a cluster whose latest heartbeat is hb (nil: none)
// must be treated as not live at time now: no heartbeat, or one older
// than its TTL. It compares the server's write time with now, which must
// be the server's clock too (Store.Now); the server's own expiry of the
// record makes hb nil soon after.
func Stale(hb *HeartbeatRecord, now time.Time) bool {
	return hb == nil || now.Sub(hb.Received) > hb.TTL()
}

func heartbeatBucketConfig(cfg Config) kv.Config {
	return kv.Config{
		Bucket:         cmp.Or(cfg.HeartbeatBucket, DefaultHeartbeatBucket),
		Replicas:       cfg.Replicas,
		Storage:        cfg.Storage,
		LimitMarkerTTL: heartbeatMarkerTTL,
		APIPrefix:      cfg.APIPrefix,
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

// Beat writes hb as its cluster's heartbeat, which the server removes
// after ttl (whole seconds, at least 1s). Version, SentAt and TTLSeconds
// are set here. It returns the heartbeat's revision.
func (s *Store) Beat(ctx context.Context, hb cluster.Heartbeat, ttl time.Duration) (uint64, error) {
	if s.heartbeats == nil {
		return 0, fmt.Errorf("bus: heartbeat of %s: bucket %s: %w", hb.Cluster, DefaultHeartbeatBucket, bus.ErrNotFound)
	}
	if !bus.IsToken(hb.Cluster) {
		return 0, fmt.Errorf("bus: cluster name %q is not a single subject token", hb.Cluster)
	}
	ttl, err := wholeSeconds(ttl)
	if err != nil {
		return 0, err
	}
	hb.Version, hb.TTLSeconds, hb.SentAt = cluster.HeartbeatVersion, int64(ttl/time.Second), s.now().UTC()
	data, err := json.Marshal(hb)
	if err != nil {
		return 0, fmt.Errorf("bus: encode heartbeat: %w", err)
	}
	return s.heartbeats.Write(ctx, hb.Cluster, data, kv.OpPut, nil, ttl)
}

// Heartbeat returns the latest heartbeat of cluster, or bus.ErrNotFound
// when it has none or it has expired on the server.
func (s *Store) Heartbeat(ctx context.Context, cluster string) (HeartbeatRecord, error) {
	if s.heartbeats == nil {
		return HeartbeatRecord{}, fmt.Errorf("bus: heartbeat of %s: %w", cluster, bus.ErrNotFound)
	}
	e, err := s.heartbeats.Get(ctx, cluster)
	if err != nil {
		return HeartbeatRecord{}, err
	}
	s.measureServerClock(ctx)
	return decodeHeartbeat(e)
}

// Now is the NATS server's clock as this reader last measured it (its own
// clock until a heartbeat read measured the offset): the clock to judge
// heartbeats by (Stale), since the server stamps their writes.
func (s *Store) Now() time.Time { return s.server.Now() }

// measureServerClock measures the offset between the reader's clock and
// the server's from the heartbeat bucket's info: one more request on a
// heartbeat read, at most once a minute.
func (s *Store) measureServerClock(ctx context.Context) {
	s.server.measure(ctx, func(ctx context.Context) (time.Time, error) {
		info, err := s.heartbeats.Info(ctx)
		return info.Now, err
	})
}

// Heartbeats returns the heartbeats the server still holds, by cluster. A
// heartbeat that does not decode is left out: its cluster reads as stale.
func (s *Store) Heartbeats(ctx context.Context) (map[string]HeartbeatRecord, error) {
	if s.heartbeats == nil {
		return map[string]HeartbeatRecord{}, nil
	}
	entries, err := s.heartbeats.List(ctx)
	if err != nil {
		return nil, err
	}
	s.measureServerClock(ctx)
	out := make(map[string]HeartbeatRecord, len(entries))
	for _, e := range entries {
		if hb, err := decodeHeartbeat(e); err == nil {
			out[e.Key] = hb
		}
	}
	return out, nil
}

func decodeHeartbeat(e kv.Entry) (HeartbeatRecord, error) {
	var hb cluster.Heartbeat
	if err := json.Unmarshal(e.Value, &hb); err != nil {
		return HeartbeatRecord{}, fmt.Errorf("bus: decode heartbeat %s: %w", e.Key, err)
	}
	if hb.Cluster != e.Key {
		// The key names the cluster (a fleet's hub files every member's
		// heartbeat under its own name), not what the value claims.
		return HeartbeatRecord{}, fmt.Errorf("bus: heartbeat %s claims to be cluster %s", e.Key, hb.Cluster)
	}
	return HeartbeatRecord{Heartbeat: hb, Revision: e.Revision, Received: e.Created}, nil
}

func isNotFound(err error) bool { return errors.Is(err, bus.ErrNotFound) }

// HeartbeatOptions configure RunHeartbeat.
type HeartbeatOptions struct {
	// Heartbeat is what every beat says (SentAt and TTLSeconds are set
	// per beat).
	Heartbeat cluster.Heartbeat
	// Interval between beats; it must be shorter than TTL (a third of it
	// is a good choice).
	Interval time.Duration
	TTL      time.Duration
	// OnError, if set, receives each failed beat; beating goes on.
	OnError func(error)
	// OnBeat, if set, is called after every beat with its error (nil when
	// the beat was stored), while ctx is not done.
	OnBeat func(error)
	// Refresh, if set, is called before each beat to update what changes
	// between beats (KEDA); it must return within the interval.
	Refresh func(ctx context.Context, hb *cluster.Heartbeat)
}

// RunHeartbeat beats at once and then every Interval until ctx is done,
// and returns ctx's error. A failed beat is reported to OnError and the
// next one is tried on schedule. Invalid options return an error at once.
func (s *Store) RunHeartbeat(ctx context.Context, opts HeartbeatOptions) error {
	if opts.Interval <= 0 || opts.Interval >= opts.TTL {
		return fmt.Errorf("bus: heartbeat interval %s must be positive and under the ttl %s", opts.Interval, opts.TTL)
	}
	if _, err := wholeSeconds(opts.TTL); err != nil {
		return err
	}
	if !bus.IsToken(opts.Heartbeat.Cluster) {
		return fmt.Errorf("bus: cluster name %q is not a single subject token", opts.Heartbeat.Cluster)
	}
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	for {
		if opts.Refresh != nil {
			opts.Refresh(ctx, &opts.Heartbeat)
		}
		_, err := s.Beat(ctx, opts.Heartbeat, opts.TTL)
		if err != nil && ctx.Err() == nil && opts.OnError != nil {
			opts.OnError(err)
		}
		if ctx.Err() == nil && opts.OnBeat != nil {
			opts.OnBeat(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
