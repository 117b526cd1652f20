package client

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/client/progress"
)

// Snapshot is what the buckets held at one moment.
type Snapshot struct {
	// Components are the latest revisions of the components (no delete
	// markers), sorted by key.
	Components []Revision
	// Statuses are every status record, each judged stale or not.
	Statuses []StatusRecord
	// Now is the NATS server's clock as measured when the statuses were
	// read (the reader's own before a heartbeat was read): the clock
	// heartbeats are judged by, so ages shown from it are right even when
	// this machine's clock is off.
	Now time.Time
}

// Selector picks the components a view shows.
type Selector struct {
	// Namespace selects one namespace; empty selects every namespace.
	Namespace string
	// Name selects one component of Namespace; empty selects all.
	Name string
	// Labels, when set, selects the components whose spec's
	// metadata.labels it matches: a status record without a spec (an
	// orphan), or with one that does not decode, matches no labels.
	Labels labels.Selector
}

// matches reports whether the component under spec key key is selected
// by namespace and name.
func (s Selector) matches(key string) bool {
	ns, name, _ := strings.Cut(key, ".")
	return (s.Namespace == "" || ns == s.Namespace) && (s.Name == "" || name == s.Name)
}

// labelled reports whether a stored component's labels match s.Labels.
func (s Selector) labelled(value []byte) bool {
	if s.Labels == nil || s.Labels.Empty() {
		return true
	}
	c, err := decode.Component(value)
	return err == nil && s.Labels.Matches(labels.Set(c.Metadata.Labels))
}

// Row is one component in one cluster, or, with Status nil, a component no
// cluster has reported a status for.
type Row struct {
	// Key is the spec key, "<namespace>.<name>".
	Key string
	// LatestRevision is the spec's latest revision; 0 when the spec bucket
	// holds no value for the key (deleted, or an orphan).
	LatestRevision uint64
	// Status is the cluster's status record; nil for a component no
	// cluster has reported on.
	Status *StatusRecord
}

// Rows returns the selected rows of snap, sorted by key and cluster: one
// per status record, plus one without a status for every component that no
// cluster has reported on.
func Rows(snap Snapshot, sel Selector) []Row {
	latest := map[string]uint64{}
	for _, e := range snap.Components {
		if sel.matches(e.Key) && sel.labelled(e.Value) {
			latest[e.Key] = e.Revision
		}
	}
	byLabels := sel.Labels != nil && !sel.Labels.Empty()
	var rows []Row
	reported := map[string]bool{}
	for i := range snap.Statuses {
		st := &snap.Statuses[i]
		if _, labelled := latest[st.Component]; sel.matches(st.Component) && (labelled || !byLabels) {
			rows = append(rows, Row{Key: st.Component, LatestRevision: latest[st.Component], Status: st})
			reported[st.Component] = true
		}
	}
	for key, rev := range latest {
		if !reported[key] {
			rows = append(rows, Row{Key: key, LatestRevision: rev})
		}
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.Cluster(), b.Cluster()))
	})
	return rows
}

// Namespace returns the namespace part of the key.
func (r Row) Namespace() string { ns, _, _ := strings.Cut(r.Key, "."); return ns }

// Name returns the name part of the key.
func (r Row) Name() string { _, name, _ := strings.Cut(r.Key, "."); return name }

// Cluster returns the reporting cluster, or "" when none has reported.
func (r Row) Cluster() string {
	if r.Status == nil {
		return ""
	}
	return r.Status.Cluster
}

// ObservedRevision returns the spec revision the cluster last reconciled,
// or 0.
func (r Row) ObservedRevision() uint64 {
	if r.Status == nil {
		return 0
	}
	return r.Status.ObservedRevision
}

// UpToDate reports whether the cluster has reconciled the latest revision.
func (r Row) UpToDate() bool {
	return r.LatestRevision != 0 && r.ObservedRevision() == r.LatestRevision
}

// Ready returns the status of the Ready condition: "True", "False" or
// "Unknown" (no status, or no Ready condition).
func (r Row) Ready() api.ConditionStatus { return r.conditionStatus(api.ConditionReady) }

// Applied returns the status of the Applied condition: every child
// applied, whatever the workload does.
func (r Row) Applied() api.ConditionStatus { return r.conditionStatus(api.ConditionApplied) }

// conditionStatus returns the status of condition typ: "True", "False"
// or "Unknown" (no status, or no such condition).
func (r Row) conditionStatus(typ string) api.ConditionStatus {
	if c, ok := r.condition(typ); ok && c.Status != "" {
		return c.Status
	}
	return api.ConditionUnknown
}

// Degraded reports whether the Degraded condition is True: the workload
// has a problem a user must act on (Reason says which).
func (r Row) Degraded() bool {
	c, ok := r.condition(api.ConditionDegraded)
	return ok && c.Status == api.ConditionTrue
}

// Stalled reports whether the Stalled condition is True: the cluster will
// not retry until a new revision is published.
func (r Row) Stalled() bool {
	c, ok := r.condition(api.ConditionStalled)
	return ok && c.Status == api.ConditionTrue
}

// orphaned reports whether the Orphaned condition is True: the cluster has
// children of a component whose spec is missing.
func (r Row) orphaned() bool {
	c, ok := r.condition(api.ConditionOrphaned)
	return ok && c.Status == api.ConditionTrue
}

// Reason returns why the row is in its state: Suspended, else the Ready
// condition's reason, else the Orphaned one's, or NotReconciled without a
// status.
func (r Row) Reason() string {
	if r.Status == nil {
		return progress.ReasonNotReconciled
	}
	return r.explain(func(c api.Condition) string { return c.Reason })
}

// Message returns the Ready (else Orphaned) condition's message, or the
// Applied one's of a suspended component.
func (r Row) Message() string {
	if r.Status == nil {
		return "no cluster has reported a status for this component yet"
	}
	return r.explain(func(c api.Condition) string { return c.Message })
}

func (r Row) explain(field func(api.Condition) string) string {
	// A suspended component says so first: its Ready is what it was.
	if c, ok := r.condition(api.ConditionApplied); ok && c.Reason == reasons.Suspended {
		return field(c)
	}
	if c, ok := r.condition(api.ConditionReady); ok {
		return field(c)
	}
	if c, ok := r.condition(api.ConditionOrphaned); ok {
		return field(c)
	}
	return ""
}

// Stale reports whether the cluster's heartbeat is missing or expired, so
// that the status may no longer be true. A row without a status is not
// stale.
func (r Row) Stale() bool { return r.Status != nil && r.Status.Stale }

func (r Row) condition(typ string) (api.Condition, bool) {
	if r.Status == nil {
		return api.Condition{}, false
	}
	for _, c := range r.Status.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return api.Condition{}, false
}

// Orphans returns the selected rows whose cluster reports the component's
// children as orphans (condition Orphaned=True: children exist but the
// spec bucket holds neither a value nor a delete marker), sorted by key
// and cluster.
func Orphans(snap Snapshot, sel Selector) []Row {
	var out []Row
	for _, r := range Rows(snap, sel) {
		if r.orphaned() {
			out = append(out, r)
		}
	}
	return out
}

// OrphanedSince returns when the cluster first reported the row as an
// orphan.
func (r Row) OrphanedSince() time.Time {
	c, _ := r.condition(api.ConditionOrphaned)
	return c.LastTransitionTime
}

// OrphanMessage is the Orphaned condition's message.
func (r Row) OrphanMessage() string {
	c, _ := r.condition(api.ConditionOrphaned)
	return c.Message
}

// Children returns the children the cluster reports for the row.
func (r Row) Children() []api.Child {
	if r.Status == nil {
		return nil
	}
	return r.Status.Children
}
