package bus

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// Spec bucket defaults.
const (
	DefaultSpecBucket  = "tinyctl-components"
	DefaultSpecHistory = 16
)

// DefaultSpecBucketConfig is the spec bucket of the design: history 16,
// one replica, file storage.
func DefaultSpecBucketConfig() BucketConfig {
	return BucketConfig{Bucket: DefaultSpecBucket, History: DefaultSpecHistory, Replicas: 1, Storage: jetstream.FileStorage}
}

// SpecStore keeps component specs as raw bytes in a KV bucket under keys
// "<namespace>.<name>" (see api.Key). Every write returns the new
// revision; revision-checked writes that lose return *RevisionMismatchError.
// Deletes leave a marker and keep history; only Purge removes it. It is
// safe for concurrent use.
type SpecStore struct {
	b *bucket
}

// OpenSpecStore binds to the spec bucket, creating it with cfg if it does
// not exist (fields left zero take DefaultSpecBucketConfig's values). A
// bucket that exists with other settings returns a *BucketConfigError and
// is not changed.
func OpenSpecStore(ctx context.Context, c *Conn, cfg BucketConfig) (*SpecStore, error) {
	def := DefaultSpecBucketConfig()
	b, err := openBucket(ctx, c, jetstream.KeyValueConfig{
		Bucket:   orDefault(cfg.Bucket, def.Bucket),
		History:  orDefault(cfg.History, def.History),
		Replicas: orDefault(cfg.Replicas, def.Replicas),
		Storage:  cfg.Storage,
	})
	if err != nil {
		return nil, err
	}
	return &SpecStore{b: b}, nil
}

// Bucket returns the bucket's name.
func (s *SpecStore) Bucket() string { return s.b.name }

// Create stores value under key only if the key is absent (never written,
// deleted or purged). A present key returns a *RevisionMismatchError that
// matches ErrExists and carries the key's revision.
func (s *SpecStore) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	var rev uint64
	err := s.b.c.guarded(ctx, s.b.writePatterns(key), func(ctx context.Context) error {
		var err error
		rev, err = s.b.kv.Create(ctx, key, value)
		return err
	})
	return rev, s.b.writeError(ctx, "create "+key, key, 0, err)
}

// Put stores value under key whatever its current revision.
func (s *SpecStore) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	var rev uint64
	err := s.b.c.guarded(ctx, s.b.writePatterns(key), func(ctx context.Context) error {
		var err error
		rev, err = s.b.kv.Put(ctx, key, value)
		return err
	})
	return rev, s.b.writeError(ctx, "put "+key, key, 0, err)
}

// Update stores value under key only if the key's latest revision is
// expected. Of two writers racing with the same expected revision exactly
// one wins; the other gets a *RevisionMismatchError with the current
// revision.
func (s *SpecStore) Update(ctx context.Context, key string, value []byte, expected uint64) (uint64, error) {
	var rev uint64
	err := s.b.c.guarded(ctx, s.b.writePatterns(key), func(ctx context.Context) error {
		var err error
		rev, err = s.b.kv.Update(ctx, key, value, expected)
		return err
	})
	return rev, s.b.writeError(ctx, "update "+key, key, expected, err)
}

// Get returns the latest value of key. A key that was never written, or
// whose latest revision is a delete or purge marker, returns ErrNotFound.
func (s *SpecStore) Get(ctx context.Context, key string) (Entry, error) {
	e, err := s.b.latest(ctx, key)
	if err == nil && e.Op != OpPut {
		return Entry{}, classify("get "+key, jetstream.ErrKeyDeleted)
	}
	return e, err
}

// GetRevision returns revision rev of key. A revision that does not
// exist, belongs to another key or is a marker returns ErrNotFound.
func (s *SpecStore) GetRevision(ctx context.Context, key string, rev uint64) (Entry, error) {
	var e Entry
	err := s.b.c.guarded(ctx, s.b.apiPatterns(), func(ctx context.Context) error {
		kve, err := s.b.kv.GetRevision(ctx, key, rev)
		if err == nil {
			e = entryFromKV(kve)
		}
		return err
	})
	return e, classify("get "+key+" revision", err)
}

// List returns the latest value of every key that is not deleted, sorted
// by key. An empty bucket returns no entries and no error.
func (s *SpecStore) List(ctx context.Context) ([]Entry, error) { return s.b.list(ctx) }

// History returns the kept revisions of key, oldest first, markers
// included. A key with no revisions returns ErrNotFound.
func (s *SpecStore) History(ctx context.Context, key string) ([]Entry, error) {
	var out []Entry
	err := s.b.c.guarded(ctx, s.b.apiPatterns(), func(ctx context.Context) error {
		h, err := s.b.kv.History(ctx, key)
		for _, e := range h {
			out = append(out, entryFromKV(e))
		}
		return err
	})
	return out, classify("history "+key, err)
}

// Delete writes a delete marker for key, keeping its history. With
// expected > 0 it deletes only if that is the latest revision.
func (s *SpecStore) Delete(ctx context.Context, key string, expected uint64) error {
	return s.remove(ctx, "delete "+key, key, expected, s.b.kv.Delete)
}

// Purge writes a purge marker for key and drops all its earlier
// revisions. It is never called implicitly. With expected > 0 it purges
// only if that is the latest revision.
func (s *SpecStore) Purge(ctx context.Context, key string, expected uint64) error {
	return s.remove(ctx, "purge "+key, key, expected, s.b.kv.Purge)
}

func (s *SpecStore) remove(ctx context.Context, op, key string, expected uint64,
	fn func(context.Context, string, ...jetstream.KVDeleteOpt) error) error {
	var opts []jetstream.KVDeleteOpt
	if expected > 0 {
		opts = append(opts, jetstream.LastRevision(expected))
	}
	err := s.b.c.guarded(ctx, s.b.writePatterns(key), func(ctx context.Context) error {
		return fn(ctx, key, opts...)
	})
	return s.b.writeError(ctx, op, key, expected, err)
}

// Rollback re-publishes the value of revision rev of key as a new
// revision, which it returns. It checks that no other write lands between
// reading the latest revision and writing (else *RevisionMismatchError).
// A revision that is gone or is a marker returns ErrNotFound.
func (s *SpecStore) Rollback(ctx context.Context, key string, rev uint64) (uint64, error) {
	old, err := s.GetRevision(ctx, key, rev)
	if err != nil {
		return 0, err
	}
	cur, err := s.b.latest(ctx, key)
	if err != nil {
		return 0, err
	}
	return s.Update(ctx, key, old.Value, cur.Revision)
}

// Watch streams the bucket's changes; see Watcher for the contract.
func (s *SpecStore) Watch(ctx context.Context, opts WatchOptions) (*Watcher, error) {
	return startWatch(ctx, s.b, opts)
}
