package statusview

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
)

// Config says which buckets a Source reads.
type Config struct {
	// SpecBucket and StatusBucket name the buckets (defaults
	// tinyctl-components and tinyctl-status). Heartbeats are read from
	// tinyctl-heartbeats.
	SpecBucket, StatusBucket string
	// Create makes Open create missing buckets with the standard settings,
	// as `tinyctl serve` would; a watch needs buckets to watch. Otherwise a
	// missing bucket reads as empty and nothing is created.
	Create bool
	// Now is the clock staleness is judged by (default time.Now).
	Now func() time.Time
}

// Source reads snapshots of the spec, status and heartbeat buckets. It
// does not own the connection.
type Source struct {
	conn     *bus.Conn
	specs    *bus.SpecStore   // nil: the bucket does not exist
	statuses *bus.StatusStore // nil: the bucket does not exist
	now      func() time.Time
}

// Open binds to the buckets cfg names on conn, adopting the settings of
// those that exist. It returns an error when NATS refuses or a bucket
// cannot be opened.
func Open(ctx context.Context, conn *bus.Conn, cfg Config) (*Source, error) {
	s := &Source{conn: conn, now: cfg.Now}
	if s.now == nil {
		s.now = time.Now
	}
	specCfg, found, err := existing(ctx, conn, orDefault(cfg.SpecBucket, bus.DefaultSpecBucket))
	if err != nil {
		return nil, err
	}
	if found || cfg.Create {
		if s.specs, err = bus.OpenSpecStore(ctx, conn, specCfg); err != nil {
			return nil, err
		}
	}
	stCfg, found, err := existing(ctx, conn, orDefault(cfg.StatusBucket, bus.DefaultStatusBucket))
	if err != nil {
		return nil, err
	}
	if found || cfg.Create {
		s.statuses, err = bus.OpenStatusStore(ctx, conn, bus.StatusConfig{
			Bucket: stCfg.Bucket, Replicas: stCfg.Replicas, Storage: stCfg.Storage, Now: s.now,
		})
	}
	return s, err
}

// existing returns the settings of bucket and whether it exists; a
// missing bucket gets the name and default settings.
func existing(ctx context.Context, conn *bus.Conn, bucket string) (bus.BucketConfig, bool, error) {
	kv, err := conn.JetStream().KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return bus.BucketConfig{Bucket: bucket}, false, nil
	}
	if err != nil {
		return bus.BucketConfig{}, false, fmt.Errorf("open bucket %s: %w", bucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return bus.BucketConfig{}, false, fmt.Errorf("bucket %s status: %w", bucket, err)
	}
	c := st.Config()
	return bus.BucketConfig{Bucket: c.Bucket, History: c.History, Replicas: c.Replicas, Storage: c.Storage}, true, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Snapshot reads the latest spec of every component and every status
// record, judged stale or not by the Source's clock.
func (s *Source) Snapshot(ctx context.Context) (Snapshot, error) {
	var snap Snapshot
	var err error
	if s.specs != nil {
		if snap.Specs, err = s.specs.List(ctx); err != nil {
			return Snapshot{}, fmt.Errorf("read specs: %w", err)
		}
	}
	if s.statuses != nil {
		if snap.Statuses, err = s.statuses.List(ctx); err != nil {
			return Snapshot{}, fmt.Errorf("read statuses: %w", err)
		}
	}
	return snap, nil
}
