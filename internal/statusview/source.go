package statusview

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
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
	specs    *specs.Store  // nil: the bucket does not exist
	statuses *status.Store // nil: the bucket does not exist
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
	mode := kv.Existing
	if cfg.Create {
		mode = kv.Adopt
	}
	var err error
	s.specs, err = specs.Open(ctx, conn, specs.Config{Bucket: cfg.SpecBucket}, mode)
	if err != nil && !errors.Is(err, bus.ErrNotFound) {
		return nil, err
	}
	s.statuses, err = status.Open(ctx, conn, status.Config{Bucket: cfg.StatusBucket, Now: s.now}, mode)
	if err != nil && !errors.Is(err, bus.ErrNotFound) {
		return nil, err
	}
	return s, nil
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
