package client

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/fleet"
)

// ClusterRow is one cluster as `tinyctl clusters` shows it: its identity
// and last heartbeat, how many components it has reconciled, and, at a
// fleet hub, how the hub gathers its records.
type ClusterRow struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// LastHeartbeat is when the server received the cluster's latest
	// heartbeat still held (zero: none is held).
	LastHeartbeat time.Time `json:"lastHeartbeat,omitzero"`
	// Stale is true when the cluster's heartbeat expired: what it reported
	// may no longer be true.
	Stale bool `json:"stale"`
	// ClusterID is the Kubernetes cluster's id its controller reports
	// (the heartbeat's ClusterID).
	ClusterID string `json:"clusterID,omitempty"`
	// Conflict says that the cluster's controller found another
	// Kubernetes cluster using its name: the row may
	// mix the two clusters' records.
	Conflict string `json:"conflict,omitempty"`
	// Placed counts the components with a status record from this
	// cluster; Ready those whose Ready condition is True (their pods run
	// the revision); Degraded those whose workload has a problem to act
	// on; Behind those whose record is for an older revision than the
	// latest published.
	Placed   int `json:"placed"`
	Ready    int `json:"ready"`
	Degraded int `json:"degraded"`
	Behind   int `json:"behind"`
	// Member is how the fleet hub gathers the cluster's records (nil: the
	// cluster has not joined, or this is no hub).
	Member *Member `json:"member,omitempty"`
}

// ClusterRows returns one row per cluster known from a heartbeat, a status
// record or the fleet membership, sorted by name.
func ClusterRows(snap Snapshot, beats map[string]Heartbeat, members []Member, now time.Time) []ClusterRow {
	latest := map[string]uint64{}
	for _, e := range snap.Components {
		latest[e.Key] = e.Revision
	}
	rows := map[string]*ClusterRow{}
	row := func(name string) *ClusterRow {
		if rows[name] == nil {
			rows[name] = &ClusterRow{Name: name, Stale: true}
		}
		return rows[name]
	}
	for name, hb := range beats {
		r := row(name)
		r.Labels, r.LastHeartbeat, r.Stale = hb.Labels, hb.Received, stale(&hb, now)
		r.ClusterID, r.Conflict = hb.ClusterID, hb.Conflict
	}
	for _, rec := range snap.Statuses {
		if rec.Err != nil || rec.Cluster == "" {
			continue
		}
		r := row(rec.Cluster)
		r.Placed++
		if rec.IsTrue(api.ConditionReady) {
			r.Ready++
		}
		if rec.IsTrue(api.ConditionDegraded) {
			r.Degraded++
		}
		if rev, ok := latest[rec.Component]; ok && rec.ObservedRevision < rev {
			r.Behind++
		}
	}
	for _, m := range members {
		row(m.Cluster).Member = &m
	}
	out := make([]ClusterRow, 0, len(rows))
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		out = append(out, *rows[name])
	}
	return out
}

// Members returns the clusters whose records this hub gathers (none when
// the status bucket gathers from no cluster: no hub).
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	if c.statuses == nil {
		return nil, nil
	}
	ms, err := fleet.Members(ctx, c.conn, c.fleetBuckets())
	return membersOf(ms), err
}

// Join makes this hub gather the status records and heartbeats of cluster
// from its JetStream domain (default: the cluster's name): the hub's status
// and heartbeat streams take the member's as sources (docs/fleet.md).
// The client must have been opened with Create, so that the hub's buckets
// exist.
func (c *Client) Join(ctx context.Context, cluster, domain string) error {
	if c.statuses == nil {
		return fmt.Errorf("join %s: the status bucket %s does not exist: %w", cluster, c.statusBucket, bus.ErrNotFound)
	}
	return fleet.Join(ctx, c.conn, c.fleetBuckets(), cluster, domain)
}

// Leave stops this hub gathering cluster's records: the member's sources
// leave the hub's streams, and the records already gathered stay.
func (c *Client) Leave(ctx context.Context, cluster string) error {
	if c.statuses == nil {
		return fmt.Errorf("leave %s: %w", cluster, fleet.ErrNotMember)
	}
	return fleet.Leave(ctx, c.conn, c.fleetBuckets(), cluster)
}

func (c *Client) fleetBuckets() fleet.Buckets { return fleet.Buckets{Status: c.statusBucket} }
