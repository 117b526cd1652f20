// Package status keeps what each cluster's controller reports: one status
// record per component per cluster (api.Status) in the status bucket, and
// one heartbeat per cluster, with a per-message TTL, in the heartbeat
// bucket, so that a reader can tell a live status from one left behind by
// a controller that stopped. The formats are documented in docs/status.md.
package status

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// Bucket defaults.
const (
	DefaultBucket          = "tinyctl-status"
	DefaultHeartbeatBucket = "tinyctl-heartbeats"
)

// Record is a status as read back: its KV revision and whether its
// cluster's heartbeat has expired (Stale), in which case the status may no
// longer be true. A record whose value does not decode has Err set and
// only Component and Cluster (from its key) filled in: one malformed
// record never hides the others.
type Record struct {
	api.Status
	Revision  uint64
	Heartbeat *HeartbeatRecord // nil when the cluster has no heartbeat
	Stale     bool
	Err       error
}

// Config configures a Store. Zero fields take defaults.
type Config struct {
	Bucket          string
	HeartbeatBucket string
	Replicas        int
	Storage         jetstream.StorageType
	// Now is the clock staleness is judged by (default time.Now).
	Now func() time.Time
	// APIPrefix and Scope read only the status rows under Scope (and
	// every heartbeat) of buckets the account imports in part
	// (kv.Config.APIPrefix): a namespace publisher's.
	APIPrefix, Scope string
}

// Store keeps status records per component per cluster, and per cluster
// heartbeats. It is safe for concurrent use.
type Store struct {
	status     *kv.Bucket
	heartbeats *kv.Bucket // nil: opened kv.Existing and there is none
	now        func() time.Time
	server     *serverClock
}

// Open binds to the status and heartbeat buckets as mode says (see
// kv.Mode). With kv.Ensure a bucket with other settings returns a
// *kv.BucketConfigError.
func Open(ctx context.Context, c *bus.Conn, cfg Config, mode kv.Mode) (*Store, error) {
	status, err := kv.Open(ctx, c, kv.Config{
		Bucket: cmp.Or(cfg.Bucket, DefaultBucket), Replicas: cfg.Replicas, Storage: cfg.Storage,
		APIPrefix: cfg.APIPrefix, Scope: cfg.Scope,
	}, mode)
	if err != nil {
		return nil, err
	}
	heartbeats, err := kv.Open(ctx, c, heartbeatBucketConfig(cfg), mode)
	if err != nil && !(mode == kv.Existing && isNotFound(err)) {
		return nil, err // a reader without the heartbeat bucket sees every cluster stale
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Store{status: status, heartbeats: heartbeats, now: now, server: &serverClock{now: now}}, nil
}

// Key is the status bucket key of a component in a cluster:
// "<namespace>.<name>.<cluster>".
func Key(component, cluster string) string { return component + "." + cluster }

// validateKey checks that component is "<namespace>.<name>" and cluster
// one token, so that keys stay parseable.
func validateKey(component, cluster string) error {
	parts := strings.Split(component, ".")
	if len(parts) != 2 || !bus.IsToken(parts[0]) || !bus.IsToken(parts[1]) {
		return fmt.Errorf("bus: status component %q is not <namespace>.<name>", component)
	}
	if !bus.IsToken(cluster) {
		return fmt.Errorf("bus: cluster name %q is not a single subject token", cluster)
	}
	return nil
}

// Put stores st under Key(st.Component, st.Cluster), stamping UpdatedAt
// with the store's clock when it is zero. It returns the new revision.
func (s *Store) Put(ctx context.Context, st api.Status) (uint64, error) {
	key, data, err := s.encode(st)
	if err != nil {
		return 0, err
	}
	return s.status.Put(ctx, key, data)
}

// encode checks st's key and returns it with st's JSON, UpdatedAt stamped
// with the store's clock when it is zero.
func (s *Store) encode(st api.Status) (string, []byte, error) {
	if err := validateKey(st.Component, st.Cluster); err != nil {
		return "", nil, err
	}
	if st.UpdatedAt.IsZero() {
		st.UpdatedAt = s.now().UTC()
	}
	data, err := json.Marshal(st)
	if err != nil {
		return "", nil, fmt.Errorf("bus: encode status: %w", err)
	}
	return Key(st.Component, st.Cluster), data, nil
}

// Write stores st as Put does, but only if the record's latest revision
// (markers included) is expect, 0 for a record never written: a record
// written since by anyone else fails the write with a
// *bus.RevisionMismatchError carrying its revision. A controller writes
// its records so, and a write it sent before losing its lease that
// arrives after a newer leader wrote the record is refused.
func (s *Store) Write(ctx context.Context, st api.Status, expect uint64) (uint64, error) {
	key, data, err := s.encode(st)
	if err != nil {
		return 0, err
	}
	return s.status.Write(ctx, key, data, kv.OpPut, &expect, 0)
}

// Remove deletes the status of a component in a cluster (a delete marker)
// only if its latest revision is expect; see Write.
func (s *Store) Remove(ctx context.Context, component, cluster string, expect uint64) (uint64, error) {
	if err := validateKey(component, cluster); err != nil {
		return 0, err
	}
	return s.status.Write(ctx, Key(component, cluster), nil, kv.OpDelete, &expect, 0)
}

// Delete removes the status of a component in a cluster (a delete marker).
func (s *Store) Delete(ctx context.Context, component, cluster string) error {
	return s.status.Delete(ctx, Key(component, cluster), 0)
}

// Get returns the status of a component in a cluster, marked stale when
// the cluster's heartbeat has expired. A missing record returns
// bus.ErrNotFound.
func (s *Store) Get(ctx context.Context, component, cluster string) (Record, error) {
	e, err := s.status.Get(ctx, Key(component, cluster))
	if err != nil {
		return Record{}, err
	}
	hb, err := s.Heartbeat(ctx, cluster)
	if err != nil && !isNotFound(err) {
		return Record{}, err
	}
	var hbp *HeartbeatRecord
	if err == nil {
		hbp = &hb
	}
	return s.record(e, hbp), nil
}

// List returns every status record, sorted by key, each marked stale or
// not by its cluster's heartbeat.
func (s *Store) List(ctx context.Context) ([]Record, error) { return s.list(ctx, ">") }

// ListCluster returns the status records one cluster wrote: what its
// controller reads at startup, whatever other clusters have written.
func (s *Store) ListCluster(ctx context.Context, cluster string) ([]Record, error) {
	if !bus.IsToken(cluster) {
		return nil, fmt.Errorf("bus: cluster name %q is not a single subject token", cluster)
	}
	return s.list(ctx, "*.*."+cluster)
}

// Clusters returns every cluster that has status records in the bucket,
// and whether its heartbeat is stale (as the records' Stale): the
// judgement `tinyctl status` makes, from the records' keys alone, so that
// serve can make it every heartbeat TTL without reading and decoding every
// record of every cluster.
func (s *Store) Clusters(ctx context.Context) (map[string]bool, error) {
	keys, err := s.status.Keys(ctx, ">")
	if err != nil {
		return nil, err
	}
	beats, err := s.Heartbeats(ctx)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	out := map[string]bool{}
	for _, k := range keys {
		c := statusFromKey(k).Cluster
		if _, seen := out[c]; seen {
			continue
		}
		var hb *HeartbeatRecord
		if b, ok := beats[c]; ok {
			hb = &b
		}
		out[c] = Stale(hb, now)
	}
	return out, nil
}

func (s *Store) list(ctx context.Context, filter string) ([]Record, error) {
	entries, err := s.status.List(ctx, filter)
	if err != nil {
		return nil, err
	}
	beats, err := s.Heartbeats(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(entries))
	for _, e := range entries {
		r := s.record(e, nil)
		if hb, ok := beats[r.Cluster]; ok {
			r = s.record(e, &hb)
		}
		out = append(out, r)
	}
	return out, nil
}

// Watch streams the status bucket's changes (see kv.Watcher); decode
// entries with Decode.
func (s *Store) Watch(ctx context.Context, opts kv.WatchOptions) (*kv.Watcher, error) {
	return s.status.Watch(ctx, opts)
}

// Decode decodes the value of a status entry.
func Decode(e kv.Entry) (api.Status, error) {
	var st api.Status
	if err := json.Unmarshal(e.Value, &st); err != nil {
		return api.Status{}, fmt.Errorf("bus: decode status %s at revision %d: %w", e.Key, e.Revision, err)
	}
	return st, nil
}

// record decodes e into a Record judged by hb; a value that does not
// decode gives a Record with Err set, named from its key.
// The key names the component and the cluster, not the value: at a fleet's
// hub, whatever a member sends is filed under its own cluster's keys, so a
// value that claims another cluster (or component) is not believed.
func (s *Store) record(e kv.Entry, hb *HeartbeatRecord) Record {
	st, err := Decode(e)
	owner := statusFromKey(e.Key)
	if err == nil && (st.Component != owner.Component || st.Cluster != owner.Cluster) {
		err = fmt.Errorf("bus: status record %s claims to be %s.%s", e.Key, st.Component, st.Cluster)
	}
	if err != nil {
		st = owner
	}
	return Record{Status: st, Revision: e.Revision, Heartbeat: hb, Stale: Stale(hb, s.Now()), Err: err}
}

// statusFromKey fills Component and Cluster from a key
// "<namespace>.<name>.<cluster>".
func statusFromKey(key string) api.Status {
	i := strings.LastIndexByte(key, '.')
	if i < 0 {
		return api.Status{Component: key}
	}
	return api.Status{Component: key[:i], Cluster: key[i+1:]}
}
