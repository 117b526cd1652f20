package cluster

import (
	"time"

	"github.com/tinyctl/tinyctl/api/validate"
)

// HeartbeatVersion is the version of the heartbeat format Heartbeat
// writes. Readers decode every version up to it; a heartbeat without one
// (0) was written before versions, with the same fields.
const HeartbeatVersion = 1

// Heartbeat is a cluster controller's sign of life, stored as JSON under
// the cluster's name in the heartbeat bucket; the server removes it TTL
// after it was written, and readers also judge it by time. It carries the
// cluster's identity and the settings its controller renders with.
type Heartbeat struct {
	// Version is HeartbeatVersion when written by this package.
	Version int `json:"version,omitempty"`
	// Cluster and Labels are the cluster's Identity.
	Cluster string            `json:"cluster"`
	Labels  map[string]string `json:"labels,omitempty"`
	// Controller is the holder name of the controller that wrote it.
	Controller string `json:"controller,omitempty"`
	// TTLSeconds is how long it counts as live after it was written.
	TTLSeconds int64     `json:"ttlSeconds"`
	SentAt     time.Time `json:"sentAt"`
	// Settings are the controller's render settings, nil from controllers
	// that predate them.
	Settings *Settings `json:"settings,omitempty"`
	// Tenancy is which subjects each namespace may use in this cluster
	// (nil from controllers that predate it).
	Tenancy *validate.Tenancy `json:"tenancy,omitempty"`
	// KEDA is whether a KEDA operator runs in the cluster, as its
	// controller last looked ("" when it could not tell).
	KEDA KEDAState `json:"keda,omitempty"`
	// ClusterID tells Kubernetes clusters apart whatever they are named
	// (a digest of the API server's CA; "" from controllers that predate
	// it): controllers of one cluster share it.
	ClusterID string `json:"clusterID,omitempty"`
	// Conflict says that another cluster beats under this cluster's name,
	// as the controller last looked ("" when none).
	Conflict string `json:"conflict,omitempty"`
}

// Identity is the cluster the heartbeat speaks for.
func (h Heartbeat) Identity() Identity { return Identity{Name: h.Cluster, Labels: h.Labels} }

// TTL is how long the heartbeat counts as live after it was written.
func (h Heartbeat) TTL() time.Duration { return time.Duration(h.TTLSeconds) * time.Second }

// KEDAState is what a controller found of KEDA's operator in its cluster.
type KEDAState string

// KEDA states; the empty state means unknown (the controller may not list
// Deployments cluster-wide, or predates the field).
const (
	// KEDARunning: an operator Deployment has an available replica.
	KEDARunning KEDAState = "running"
	// KEDAAbsent: no operator Deployment, or none with an available
	// replica: ScaledObjects are written but nothing scales.
	KEDAAbsent KEDAState = "absent"
)
