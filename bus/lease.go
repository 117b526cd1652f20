package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Lease bucket defaults.
const (
	DefaultLeaseBucket = "tinyctl-leases"
	DefaultLeaseTTL    = 15 * time.Second
	// leaseMarkerTTL is how long the server keeps the marker of an expired
	// lease.
	leaseMarkerTTL = time.Minute
)

// LeaseConfig configures a LeaseStore. Zero fields take defaults.
type LeaseConfig struct {
	Bucket   string
	Replicas int
	Storage  jetstream.StorageType
}

// LeaseOptions tune one lease. Zero fields take defaults.
type LeaseOptions struct {
	// TTL is how long the lease lives after a write unless renewed: whole
	// seconds, at least 1s (default 15s).
	TTL time.Duration
	// RenewInterval is how often the holder renews, and how often Campaign
	// retries (default TTL/3).
	RenewInterval time.Duration
	// FencingMargin is how much sooner than the server the holder considers
	// its lease lost (default TTL/5). It must cover clock-rate and clock
	// skew errors; see docs/leases.md.
	FencingMargin time.Duration
	// OnRenewError, if set, receives renewals that failed but may succeed
	// on retry (the lease is not lost yet).
	OnRenewError func(error)
}

// withDefaults fills defaults and checks that renewals fit in the TTL.
func (o LeaseOptions) withDefaults() (LeaseOptions, error) {
	ttl, err := wholeSeconds(orDefault(o.TTL, DefaultLeaseTTL))
	if err != nil {
		return o, err
	}
	o.TTL = ttl
	o.RenewInterval = orDefault(o.RenewInterval, ttl/3)
	o.FencingMargin = orDefault(o.FencingMargin, ttl/5)
	if o.RenewInterval <= 0 || o.FencingMargin < 0 || o.RenewInterval >= o.TTL-o.FencingMargin {
		return o, fmt.Errorf("bus: lease renew interval %s must be positive and under ttl %s minus fencing margin %s",
			o.RenewInterval, o.TTL, o.FencingMargin)
	}
	return o, nil
}

// LeaseHeldError says a live lease belongs to another holder.
type LeaseHeldError struct {
	Name     string
	Holder   string // empty when the winner of a race is not known
	Revision uint64
}

// Error names the lease, its holder and revision.
func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("bus: lease %s is held by %q (revision %d)", e.Name, e.Holder, e.Revision)
}

// Is makes the error match ErrLeaseHeld.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

// leaseRecord is the value of a lease key.
type leaseRecord struct {
	Holder     string    `json:"holder"`
	TTLSeconds int64     `json:"ttlSeconds"`
	RenewedAt  time.Time `json:"renewedAt"`
}

// LeaseStore hands out named leases kept in a KV bucket whose entries the
// server expires. It is safe for concurrent use.
type LeaseStore struct {
	b *bucket
}

// OpenLeaseStore binds to the lease bucket, creating it if it does not
// exist. A bucket with other settings returns a *BucketConfigError.
func OpenLeaseStore(ctx context.Context, c *Conn, cfg LeaseConfig) (*LeaseStore, error) {
	b, err := openBucket(ctx, c, jetstream.KeyValueConfig{
		Bucket:         orDefault(cfg.Bucket, DefaultLeaseBucket),
		Replicas:       cfg.Replicas,
		Storage:        cfg.Storage,
		LimitMarkerTTL: leaseMarkerTTL,
	})
	if err != nil {
		return nil, err
	}
	return &LeaseStore{b: b}, nil
}

// Acquire makes one attempt to take lease name for holder (a name unique
// to this process, such as its pod name). It succeeds when the lease is
// free, has expired (removed by the server, or older than its TTL by this
// machine's clock), or is already holder's. A live lease of another
// holder returns *LeaseHeldError.
//
// On success the lease is renewed in the background until ctx is done,
// Release is called, or the lease is lost; Lost is closed then. Cancelling
// ctx stops renewing without releasing, as a crash would.
func (s *LeaseStore) Acquire(ctx context.Context, name, holder string, opts LeaseOptions) (*Lease, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	expect, err := s.claimable(ctx, name, holder)
	if err != nil {
		return nil, err
	}
	l := &Lease{store: s, name: name, holder: holder, opts: opts, lost: make(chan struct{}), done: make(chan struct{})}
	if err := l.write(ctx, expect); err != nil {
		var mismatch *RevisionMismatchError
		if errors.As(err, &mismatch) {
			return nil, &LeaseHeldError{Name: name, Revision: mismatch.Current}
		}
		return nil, err
	}
	renewCtx, stop := context.WithCancel(ctx)
	l.stop = stop
	go l.keep(renewCtx)
	return l, nil
}

// claimable returns the revision to overwrite when holder may take lease
// name, or *LeaseHeldError.
func (s *LeaseStore) claimable(ctx context.Context, name, holder string) (uint64, error) {
	cur, err := s.b.latest(ctx, name)
	switch {
	case errors.Is(err, ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	case cur.Op != OpPut:
		return cur.Revision, nil
	}
	var rec leaseRecord
	if err := json.Unmarshal(cur.Value, &rec); err != nil {
		return 0, fmt.Errorf("bus: decode lease %s: %w", name, err)
	}
	expired := time.Since(cur.Created) > time.Duration(rec.TTLSeconds)*time.Second
	if rec.Holder != holder && !expired {
		return 0, &LeaseHeldError{Name: name, Holder: rec.Holder, Revision: cur.Revision}
	}
	return cur.Revision, nil
}

// Campaign calls Acquire until it succeeds, retrying every RenewInterval
// (less up to a fifth, so contenders spread out) while the lease is held
// or the failure is transient. It returns ctx's error when ctx ends first,
// and any other error at once.
func (s *LeaseStore) Campaign(ctx context.Context, name, holder string, opts LeaseOptions) (*Lease, error) {
	full, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	for {
		l, err := s.Acquire(ctx, name, holder, opts)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrLeaseHeld) && !IsTransient(err) {
			return nil, err
		}
		wait := full.RenewInterval - time.Duration(rand.Int64N(int64(full.RenewInterval/5)+1))
		if !sleepCtx(ctx, wait) {
			return nil, fmt.Errorf("bus: campaign for lease %s: %w", name, ctx.Err())
		}
	}
}
