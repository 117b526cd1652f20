package client

import (
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus/fleet"
	"github.com/tinyctl/tinyctl/bus/status"
)

// StatusRecord is one cluster's status of one component, as read.
type StatusRecord struct {
	api.Status
	// Heartbeat is the reporting cluster's latest heartbeat (nil: none is
	// held).
	Heartbeat *Heartbeat
	// Stale is true when that heartbeat is missing or expired by the
	// server's clock: what the record says may no longer be true.
	Stale bool
	// Err says why the stored record does not decode; only Component and
	// Cluster (from its key) are set then.
	Err error
}

// Heartbeat is a cluster's latest heartbeat: what its controller wrote
// (cluster.Heartbeat, the wire type), and when the server received it.
type Heartbeat struct {
	cluster.Heartbeat
	Received time.Time
}

// Expires is when the heartbeat stops counting as live (by the server's
// clock, which Snapshot.Now reads).
func (h Heartbeat) Expires() time.Time { return h.Received.Add(h.TTL()) }

// stale reports whether hb (nil: none) is not live at now.
func stale(hb *Heartbeat, now time.Time) bool { return hb == nil || now.After(hb.Expires()) }

// Member is a cluster whose records a fleet hub gathers.
type Member struct {
	Cluster string `json:"cluster"`
	// Domain is the JetStream domain of the cluster's NATS.
	Domain string `json:"domain"`
	// Lag is how many of the cluster's status messages the hub has yet to
	// copy; Active is how long ago the hub last heard from the cluster's
	// status bucket (negative: never); Error is the source's last error.
	Lag    uint64        `json:"lag"`
	Active time.Duration `json:"active"`
	Error  string        `json:"error,omitempty"`
}

func heartbeatOf(hb *status.HeartbeatRecord) *Heartbeat {
	if hb == nil {
		return nil
	}
	return &Heartbeat{Heartbeat: hb.Heartbeat, Received: hb.Received}
}

func recordsOf(rs []status.Record) []StatusRecord {
	out := make([]StatusRecord, len(rs))
	for i, r := range rs {
		out[i] = StatusRecord{Status: r.Status, Heartbeat: heartbeatOf(r.Heartbeat), Stale: r.Stale, Err: r.Err}
	}
	return out
}

func membersOf(ms []fleet.Member) []Member {
	out := make([]Member, len(ms))
	for i, m := range ms {
		out[i] = Member(m)
	}
	return out
}
