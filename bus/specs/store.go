// Package specs is the spec bucket: component specs as raw bytes under
// keys "<namespace>.<name>" (api.Key), with revision-checked writes,
// history, rollback and a resumable watch. Publishers write it (the CLI,
// the public client, any NATS client); controllers watch it.
package specs

import (
	"cmp"
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// Spec bucket defaults.
const (
	DefaultBucket  = "tinyctl-components"
	DefaultHistory = 16
)

// Config names the spec bucket and the settings it is created with. Zero
// fields take the defaults: bucket tinyctl-components, history 16, one
// replica, file storage.
type Config struct {
	Bucket   string
	History  uint8
	Replicas int
	Storage  jetstream.StorageType
	// HubDomain, when set, makes the bucket a read-only mirror of the
	// bucket of the same name in a fleet hub's JetStream domain (see
	// kv.Config.MirrorDomain): a cluster's controller keeps reading it
	// while the hub is out of reach.
	HubDomain string
	// APIPrefix and Scope read and write only the keys under Scope of a
	// bucket the account imports in part (kv.Config.APIPrefix): a
	// namespace publisher's.
	APIPrefix, Scope string
}

func (c Config) kv() kv.Config {
	return kv.Config{
		Bucket: cmp.Or(c.Bucket, DefaultBucket), History: cmp.Or(c.History, DefaultHistory),
		Replicas: c.Replicas, Storage: c.Storage, MirrorDomain: c.HubDomain,
		APIPrefix: c.APIPrefix, Scope: c.Scope,
	}
}

// Store is the spec bucket. Every write returns the new revision;
// revision-checked writes that lose return *bus.RevisionMismatchError.
// Deletes leave a marker and keep history; only Purge removes it, and
// nothing here purges implicitly. It is safe for concurrent use.
type Store struct {
	*kv.Bucket
}

// Open binds to the spec bucket cfg names, as mode says (see kv.Mode): a
// controller opens it with kv.Ensure, a publisher with kv.Adopt, a reader
// with kv.Existing (a missing bucket is bus.ErrNotFound).
func Open(ctx context.Context, c *bus.Conn, cfg Config, mode kv.Mode) (*Store, error) {
	b, err := kv.Open(ctx, c, cfg.kv(), mode)
	if err != nil {
		return nil, err
	}
	return &Store{Bucket: b}, nil
}

// KeptRevisions returns how many revisions the bucket keeps per key.
func (s *Store) KeptRevisions() int { return int(max(s.Config().History, 1)) }

// Rollback re-publishes the value of revision rev of key as a new
// revision, which it returns. It checks that no other write lands between
// reading the latest revision and writing (else
// *bus.RevisionMismatchError). A revision that is gone or is a marker
// returns bus.ErrNotFound.
func (s *Store) Rollback(ctx context.Context, key string, rev uint64) (uint64, error) {
	old, err := s.GetRevision(ctx, key, rev)
	if err != nil {
		return 0, err
	}
	cur, err := s.Latest(ctx, key)
	if err != nil {
		return 0, err
	}
	return s.Update(ctx, key, old.Value, cur.Revision)
}
