package statusview

import (
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/client"
)

// Kinds of the lists -o json|yaml prints.
const (
	StatusListKind = "StatusList"
	OrphanListKind = "OrphanList"
)

// StatusList is the machine-readable output of `tinyctl status`. Its shape
// is a documented contract (docs/cli.md): fields may be added, never
// renamed or removed.
type StatusList struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Items      []StatusItem `json:"items"`
}

// StatusItem is one component in one cluster.
type StatusItem struct {
	Key       string `json:"key"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Cluster is absent when no cluster has reported on the component.
	Cluster string `json:"cluster,omitempty"`
	// LatestRevision is the spec's latest revision, 0 when the spec bucket
	// holds no value for the key.
	LatestRevision uint64 `json:"latestRevision"`
	// ObservedRevision is the revision the cluster last reconciled, 0 when
	// it has not.
	ObservedRevision uint64 `json:"observedRevision"`
	UpToDate         bool   `json:"upToDate"`
	// Ready is the Ready condition's status: True, False or Unknown.
	Ready api.ConditionStatus `json:"ready"`
	// Applied is the Applied condition's status: every child applied,
	// whatever the pods do (Unknown from a controller older than it).
	Applied api.ConditionStatus `json:"applied"`
	// Degraded says the workload has a problem to act on (Reason).
	Degraded bool   `json:"degraded"`
	Stalled  bool   `json:"stalled"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
	// Stale says the cluster's heartbeat is missing or expired.
	Stale     bool           `json:"stale"`
	Heartbeat *HeartbeatInfo `json:"heartbeat,omitempty"`
	// Status is the record as the cluster stored it (docs/status.md).
	Status *api.Status `json:"status,omitempty"`
	// Queue is the component's queue on the cluster (status --queues);
	// QueueError says why it is absent.
	Queue      *QueueInfo `json:"queue,omitempty"`
	QueueError string     `json:"queueError,omitempty"`
}

// HeartbeatInfo is the last heartbeat of a status's cluster.
type HeartbeatInfo struct {
	Controller string `json:"controller,omitempty"`
	TTLSeconds int64  `json:"ttlSeconds"`
	// Time is when the server stored the heartbeat, UTC.
	Time time.Time `json:"time"`
}

// NewStatusList describes rows (items is [], never null, in JSON).
func NewStatusList(rows []client.Row) StatusList {
	items := make([]StatusItem, 0, len(rows))
	for _, r := range rows {
		items = append(items, newStatusItem(r))
	}
	return StatusList{APIVersion: api.APIVersion, Kind: StatusListKind, Items: items}
}

func newStatusItem(r client.Row) StatusItem {
	it := StatusItem{
		Key: r.Key, Namespace: r.Namespace(), Name: r.Name(), Cluster: r.Cluster(),
		LatestRevision: r.LatestRevision, ObservedRevision: r.ObservedRevision(), UpToDate: r.UpToDate(),
		Ready: r.Ready(), Applied: r.Applied(), Degraded: r.Degraded(), Stalled: r.Stalled(), Reason: r.Reason(), Message: r.Message(), Stale: r.Stale(),
	}
	if r.Status != nil {
		st := r.Status.Status
		it.Status = &st
		it.Heartbeat = heartbeatInfo(r.Status.Heartbeat)
	}
	return it
}

func heartbeatInfo(hb *client.Heartbeat) *HeartbeatInfo {
	if hb == nil {
		return nil
	}
	return &HeartbeatInfo{Controller: hb.Controller, TTLSeconds: hb.TTLSeconds, Time: hb.Received.UTC()}
}
