// Package lease hands out named TTL leases kept in a KV bucket whose
// entries the server expires, for leader election among a cluster's
// controllers, and the Fence that guards a holder's writes by its lease.
// See docs/leases.md for the timing argument.
package lease

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/utils/clock"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// Lease bucket defaults.
const (
	DefaultBucket = "tinyctl-leases"
	DefaultTTL    = 15 * time.Second
	// markerTTL is how long the server keeps the marker of an expired
	// lease.
	markerTTL = time.Minute
)

// Errors of this package; test with errors.Is.
var (
	// ErrHeld means another holder owns a live lease.
	ErrHeld = errors.New("lease held by another holder")
	// ErrLost means a held lease was taken over, deleted, released, or
	// not renewed in time.
	ErrLost = errors.New("lease lost")
)

// HeldError says a live lease belongs to another holder.
type HeldError struct {
	Name     string
	Holder   string // empty when the winner of a race is not known
	Revision uint64
}

// Error names the lease, its holder and revision.
func (e *HeldError) Error() string {
	return fmt.Sprintf("bus: lease %s is held by %q (revision %d)", e.Name, e.Holder, e.Revision)
}

// Is makes the error match ErrHeld.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Config configures a Store. Zero fields take defaults.
type Config struct {
	Bucket   string
	Replicas int
	Storage  jetstream.StorageType
	// Clock times renewals and fencing deadlines (default the real clock;
	// tests inject a fake one).
	Clock clock.WithTicker
	// Adopt uses an existing bucket whatever its replicas and storage (a
	// tool taking a short lock where a controller made the bucket); a
	// missing one is created with the settings above.
	Adopt bool
}

// Options tune one lease. Zero fields take defaults.
type Options struct {
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
func (o Options) withDefaults() (Options, error) {
	ttl := cmp.Or(o.TTL, DefaultTTL)
	if ttl < time.Second {
		return o, fmt.Errorf("bus: lease ttl %s is under the server's minimum of 1s", ttl)
	}
	o.TTL = ttl.Truncate(time.Second)
	o.RenewInterval = cmp.Or(o.RenewInterval, o.TTL/3)
	o.FencingMargin = cmp.Or(o.FencingMargin, o.TTL/5)
	if o.RenewInterval <= 0 || o.FencingMargin < 0 || o.RenewInterval >= o.TTL-o.FencingMargin {
		return o, fmt.Errorf("bus: lease renew interval %s must be positive and under ttl %s minus fencing margin %s",
			o.RenewInterval, o.TTL, o.FencingMargin)
	}
	return o, nil
}

// record is the value of a lease key.
type record struct {
	Holder     string    `json:"holder"`
	TTLSeconds int64     `json:"ttlSeconds"`
	RenewedAt  time.Time `json:"renewedAt"`
}

// Store hands out named leases. It is safe for concurrent use.
type Store struct {
	b     *kv.Bucket
	clock clock.WithTicker
}

// Open binds to the lease bucket, creating it if it does not exist. A
// bucket with other settings returns a *kv.BucketConfigError, unless
// cfg.Adopt.
func Open(ctx context.Context, c *bus.Conn, cfg Config) (*Store, error) {
	mode := kv.Ensure
	if cfg.Adopt {
		mode = kv.Adopt
	}
	b, err := kv.Open(ctx, c, kv.Config{
		Bucket: cmp.Or(cfg.Bucket, DefaultBucket), Replicas: cfg.Replicas, Storage: cfg.Storage,
		LimitMarkerTTL: markerTTL,
	}, mode)
	if err != nil {
		return nil, err
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Store{b: b, clock: clk}, nil
}

// Acquire makes one attempt to take lease name for holder (a name unique
// to this process, such as its pod name). It succeeds when the lease is
// free or has expired (removed by the server, or older than its TTL by
// the server's clock). A live lease returns *HeldError, even one
// recorded under the same holder name: a second process started with the
// name of a live one must not share its lease.
//
// On success the lease is renewed in the background until ctx is done,
// Release is called, or the lease is lost; Lost is closed then. Cancelling
// ctx stops renewing without releasing, as a crash would.
func (s *Store) Acquire(ctx context.Context, name, holder string, opts Options) (*Lease, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	expect, err := s.claimable(ctx, name)
	if err != nil {
		return nil, err
	}
	l := &Lease{store: s, name: name, holder: holder, opts: opts, lost: make(chan struct{}), done: make(chan struct{})}
	if err := l.write(ctx, expect); err != nil {
		var mismatch *bus.RevisionMismatchError
		if errors.As(err, &mismatch) {
			return nil, &HeldError{Name: name, Revision: mismatch.Current}
		}
		return nil, err
	}
	if err := l.issueToken(ctx); err != nil {
		rev := l.Revision()
		_, _ = s.b.Write(context.WithoutCancel(ctx), name, nil, kv.OpDelete, &rev, 0) // give it back
		if errors.Is(err, bus.ErrNotFound) || errors.Is(err, bus.ErrRevisionMismatch) {
			// A clustered bucket changing leaders can answer a read
			// with less than it has acknowledged: try again.
			return nil, &bus.TransientError{Op: "lease " + name + " token", Err: err}
		}
		return nil, err
	}
	renewCtx, stop := context.WithCancel(ctx)
	l.stop = stop
	go l.keep(renewCtx)
	return l, nil
}

// TokenKey is the key, beside lease name's, of the last fencing token
// issued for it. It has no TTL: it outlives every tenure.
func TokenKey(name string) string { return name + ".token" }

// issueToken gives l its fencing token: the server's time of the write
// that acquired it, or a nanosecond after the last token issued for the
// lease when that is not earlier, recorded under TokenKey with a
// revision-checked write before any renewal replaces the acquiring
// record. Only the holder writes the token key, so the check loses only
// to a bucket made again meanwhile, which it then starts afresh.
func (l *Lease) issueToken(ctx context.Context) error {
	rev := l.Revision()
	// From the leader: the replica a direct get reaches may not have
	// applied the write yet, and would answer not found.
	e, err := l.store.b.GetRevisionFromLeader(ctx, l.name, rev)
	if err != nil {
		return fmt.Errorf("bus: lease %s: read the acquiring write (revision %d) back: %w", l.name, rev, err)
	}
	token, expect := e.Created, uint64(0)
	last, err := l.store.b.LatestFromLeader(ctx, TokenKey(l.name))
	switch {
	case errors.Is(err, bus.ErrNotFound):
	case err != nil:
		return fmt.Errorf("bus: lease %s: read the last token: %w", l.name, err)
	default:
		expect = last.Revision
		if t, perr := time.Parse(TokenLayout, string(last.Value)); perr == nil && !token.After(t) {
			token = t.Add(time.Nanosecond)
		}
	}
	if _, err := l.store.b.Write(ctx, TokenKey(l.name), []byte(token.UTC().Format(TokenLayout)), kv.OpPut, &expect, 0); err != nil {
		return fmt.Errorf("bus: lease %s: record its token: %w", l.name, err)
	}
	l.token = token
	return nil
}

// claimable returns the revision to overwrite when lease name may be
// taken, or *HeldError.
func (s *Store) claimable(ctx context.Context, name string) (uint64, error) {
	cur, err := s.b.Latest(ctx, name)
	switch {
	case errors.Is(err, bus.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	case cur.Op != kv.OpPut:
		return cur.Revision, nil
	}
	var rec record
	if err := json.Unmarshal(cur.Value, &rec); err != nil {
		return cur.Revision, nil // an unreadable lease protects nothing: take it
	}
	// The record's age is read on the server's clock, which stamped it: a
	// contender whose wall clock runs ahead must not take a live lease
	// (its holder measures validity on its own clock from the write).
	info, err := s.b.Info(ctx)
	if err != nil {
		return 0, err
	}
	if info.Now.IsZero() || info.Now.Sub(cur.Created) <= time.Duration(rec.TTLSeconds)*time.Second {
		return 0, &HeldError{Name: name, Holder: rec.Holder, Revision: cur.Revision}
	}
	return cur.Revision, nil
}

// Campaign calls Acquire until it succeeds, retrying every RenewInterval
// (less up to a fifth, so contenders spread out) while the lease is held
// or the failure is transient. It returns ctx's error when ctx ends first,
// and any other error at once.
func (s *Store) Campaign(ctx context.Context, name, holder string, opts Options) (*Lease, error) {
	full, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	for {
		l, err := s.Acquire(ctx, name, holder, opts)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrHeld) && !bus.IsTransient(err) {
			return nil, err
		}
		wait := full.RenewInterval - time.Duration(rand.Int64N(int64(full.RenewInterval/5)+1))
		select {
		case <-s.clock.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("bus: campaign for lease %s: %w", name, ctx.Err())
		}
	}
}
