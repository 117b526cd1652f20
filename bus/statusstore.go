package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Status bucket defaults.
const (
	DefaultStatusBucket    = "tinyctl-status"
	DefaultHeartbeatBucket = "tinyctl-heartbeats"
)

// Condition statuses.
const (
	ConditionTrue    = "True"
	ConditionFalse   = "False"
	ConditionUnknown = "Unknown"
)

// Status is what one cluster's controller last observed about one
// component. It is stored as JSON under StatusKey(Component, Cluster); the
// format is documented in docs/status.md.
type Status struct {
	// Component is the spec key, "<namespace>.<name>".
	Component string `json:"component"`
	// Cluster is the reporting cluster's name (one NATS subject token).
	Cluster string `json:"cluster"`
	// ObservedRevision is the spec revision this status describes.
	ObservedRevision uint64      `json:"observedRevision"`
	Conditions       []Condition `json:"conditions,omitempty"`
	Children         []Child     `json:"children,omitempty"`
	// Error is the last reconcile error, empty when it succeeded.
	Error     string    `json:"error,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Condition is one aspect of a component's state, Kubernetes style.
type Condition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"` // ConditionTrue, ConditionFalse or ConditionUnknown
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// Child is an object derived from the component.
type Child struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Hash      string `json:"hash,omitempty"`
}

// StatusRecord is a Status as read back: its KV revision and whether its
// cluster's heartbeat has expired (Stale), in which case the status may no
// longer be true.
type StatusRecord struct {
	Status
	Revision  uint64
	Heartbeat *HeartbeatRecord // nil when the cluster has no heartbeat
	Stale     bool
}

// StatusConfig configures a StatusStore. Zero fields take defaults.
type StatusConfig struct {
	Bucket          string
	HeartbeatBucket string
	Replicas        int
	Storage         jetstream.StorageType
	// Now is the clock staleness is judged by (default time.Now).
	Now func() time.Time
}

// StatusStore keeps status records per component per cluster, and per
// cluster heartbeats. It is safe for concurrent use.
type StatusStore struct {
	status     *bucket
	heartbeats *bucket
	now        func() time.Time
}

// OpenStatusStore binds to the status and heartbeat buckets, creating them
// if they do not exist. A bucket with other settings returns a
// *BucketConfigError.
func OpenStatusStore(ctx context.Context, c *Conn, cfg StatusConfig) (*StatusStore, error) {
	status, err := openBucket(ctx, c, jetstream.KeyValueConfig{
		Bucket:   orDefault(cfg.Bucket, DefaultStatusBucket),
		Replicas: cfg.Replicas,
		Storage:  cfg.Storage,
	})
	if err != nil {
		return nil, err
	}
	heartbeats, err := openBucket(ctx, c, heartbeatBucketConfig(cfg))
	if err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &StatusStore{status: status, heartbeats: heartbeats, now: now}, nil
}

// StatusKey is the status bucket key of a component in a cluster:
// "<namespace>.<name>.<cluster>".
func StatusKey(component, cluster string) string { return component + "." + cluster }

// validateStatusKey checks that component is "<namespace>.<name>" and
// cluster one token, so that keys stay parseable.
func validateStatusKey(component, cluster string) error {
	parts := strings.Split(component, ".")
	if len(parts) != 2 || !validToken(parts[0]) || !validToken(parts[1]) {
		return fmt.Errorf("bus: status component %q is not <namespace>.<name>", component)
	}
	if !validToken(cluster) {
		return fmt.Errorf("bus: cluster name %q is not a single subject token", cluster)
	}
	return nil
}

func validToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".*> \t\r\n")
}

// Put stores st under StatusKey(st.Component, st.Cluster), stamping
// UpdatedAt with the store's clock when it is zero. It returns the new
// revision.
func (s *StatusStore) Put(ctx context.Context, st Status) (uint64, error) {
	if err := validateStatusKey(st.Component, st.Cluster); err != nil {
		return 0, err
	}
	if st.UpdatedAt.IsZero() {
		st.UpdatedAt = s.now().UTC()
	}
	data, err := json.Marshal(st)
	if err != nil {
		return 0, fmt.Errorf("bus: encode status: %w", err)
	}
	key := StatusKey(st.Component, st.Cluster)
	var rev uint64
	err = s.status.c.guarded(ctx, s.status.writePatterns(key), func(ctx context.Context) error {
		rev, err = s.status.kv.Put(ctx, key, data)
		return err
	})
	return rev, s.status.writeError(ctx, "put status "+key, key, 0, err)
}

// Delete removes the status of a component in a cluster (a delete marker).
func (s *StatusStore) Delete(ctx context.Context, component, cluster string) error {
	key := StatusKey(component, cluster)
	err := s.status.c.guarded(ctx, s.status.writePatterns(key), func(ctx context.Context) error {
		return s.status.kv.Delete(ctx, key)
	})
	return s.status.writeError(ctx, "delete status "+key, key, 0, err)
}

// Get returns the status of a component in a cluster, marked stale when
// the cluster's heartbeat has expired. A missing record returns
// ErrNotFound.
func (s *StatusStore) Get(ctx context.Context, component, cluster string) (StatusRecord, error) {
	e, err := s.status.latest(ctx, StatusKey(component, cluster))
	if err == nil && e.Op != OpPut {
		err = classify("get status", jetstream.ErrKeyDeleted)
	}
	if err != nil {
		return StatusRecord{}, err
	}
	var hbp *HeartbeatRecord
	hb, err := s.Heartbeat(ctx, cluster)
	switch {
	case err == nil:
		hbp = &hb
	case !errors.Is(err, ErrNotFound):
		return StatusRecord{}, err
	}
	st, err := DecodeStatus(e)
	if err != nil {
		return StatusRecord{}, err
	}
	return s.judge(st, e.Revision, hbp), nil
}

// List returns every status record, sorted by key, each marked stale or
// not by its cluster's heartbeat.
func (s *StatusStore) List(ctx context.Context) ([]StatusRecord, error) {
	entries, err := s.status.list(ctx)
	if err != nil {
		return nil, err
	}
	beats, err := s.Heartbeats(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]StatusRecord, 0, len(entries))
	for _, e := range entries {
		st, err := DecodeStatus(e)
		if err != nil {
			return nil, err
		}
		hb, ok := beats[st.Cluster]
		var hbp *HeartbeatRecord
		if ok {
			hbp = &hb
		}
		out = append(out, s.judge(st, e.Revision, hbp))
	}
	return out, nil
}

// Watch streams the status bucket's changes (see Watcher); decode entries
// with DecodeStatus.
func (s *StatusStore) Watch(ctx context.Context, opts WatchOptions) (*Watcher, error) {
	return startWatch(ctx, s.status, opts)
}

// DecodeStatus decodes the value of a status entry.
func DecodeStatus(e Entry) (Status, error) {
	var st Status
	if err := json.Unmarshal(e.Value, &st); err != nil {
		return Status{}, fmt.Errorf("bus: decode status %s at revision %d: %w", e.Key, e.Revision, err)
	}
	return st, nil
}

// judge builds a record whose Stale says whether hb is missing or expired.
func (s *StatusStore) judge(st Status, rev uint64, hb *HeartbeatRecord) StatusRecord {
	return StatusRecord{Status: st, Revision: rev, Heartbeat: hb, Stale: HeartbeatStale(hb, s.now())}
}
