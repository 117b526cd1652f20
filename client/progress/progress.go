// Package progress judges how far one revision of a component has got on
// the clusters its placement selects: what apply --wait and status
// --wait-for wait on. It is pure: the caller reads the buckets.
package progress

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
)

// Reasons given for a cluster that has not reported the revision, and for
// a target no live cluster is placed on.
const (
	ReasonNotReconciled = "NotReconciled"
	ReasonNoCluster     = "NoCluster"
)

// Target is one revision of one component to wait for.
type Target struct {
	// Key is the spec key, "<namespace>.<name>".
	Key string
	// Revision is the revision the clusters must have reconciled (a later
	// one will do).
	Revision uint64
}

// Progress is how far a Target has got on every live cluster its
// placement selects.
type Progress struct {
	Target
	// Done: every such cluster reports the condition True at Revision or
	// later, and there is at least one.
	Done bool
	// Failed: a cluster reports, at Revision or later, what waiting cannot
	// change: Stalled (not retried until a new revision) or a rollout past
	// its progress deadline.
	Failed bool
	// Clusters are the placed clusters, sorted by name.
	Clusters []Cluster
}

// Cluster is one placed cluster's answer.
type Cluster struct {
	Cluster string
	// Met: the condition is True at Revision or later.
	Met bool
	// ObservedRevision is the revision the cluster last reported on (0:
	// none yet).
	ObservedRevision uint64
	// Reason and Message say why it is not met yet.
	Reason, Message string
}

// Of judges t by the latest specs and the status records: which live clusters (beats, judged at
// now) its placement selects, and whether each reports condition cond True
// at its revision.
func Of(specs []kv.Entry, statuses []status.Record, beats map[string]status.HeartbeatRecord, t Target, cond string, now time.Time) Progress {
	p := Progress{Target: t}
	placed := placedOn(specs, beats, t.Key, now)
	records := map[string]*status.Record{}
	for i := range statuses {
		if r := &statuses[i]; r.Component == t.Key && r.Err == nil {
			records[r.Cluster] = r
		}
	}
	for _, name := range placed {
		c := Cluster{Cluster: name}
		rec := records[name]
		switch {
		case rec == nil:
			c.Reason, c.Message = ReasonNotReconciled, "no status reported yet"
		case rec.ObservedRevision < t.Revision:
			c.ObservedRevision, c.Reason = rec.ObservedRevision, ReasonNotReconciled
			c.Message = fmt.Sprintf("reports revision %d, not yet %d", rec.ObservedRevision, t.Revision)
		default:
			c.ObservedRevision = rec.ObservedRevision
			c.Met = rec.IsTrue(cond)
			c.Reason, c.Message = why(rec.Status, cond)
			p.Failed = p.Failed || hopeless(rec.Status)
		}
		p.Clusters = append(p.Clusters, c)
	}
	p.Done = len(p.Clusters) > 0 && !slices.ContainsFunc(p.Clusters, func(c Cluster) bool { return !c.Met })
	return p
}

// placedOn returns the live clusters the placement of the component under
// key selects, sorted.
func placedOn(specs []kv.Entry, beats map[string]status.HeartbeatRecord, key string, now time.Time) []string {
	var comp api.Component
	for _, e := range specs {
		if e.Key == key {
			comp, _ = decode.Component(e.Value)
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(beats)) {
		hb := beats[name]
		if !status.Stale(&hb, now) && (cluster.Identity{Name: name, Labels: hb.Labels}).Places(comp) {
			out = append(out, name)
		}
	}
	return out
}

// why is the reason and message a status gives for condition cond: the
// condition's own when it is False, else the Degraded or Stalled one's.
func why(st api.Status, cond string) (string, string) {
	c, ok := st.Condition(cond)
	if !ok {
		return "", fmt.Sprintf("the cluster's controller reports no %s condition (an older version?)", cond)
	}
	return c.Reason, c.Message
}

// hopeless reports whether st says that waiting cannot help.
func hopeless(st api.Status) bool {
	if st.IsTrue(api.ConditionStalled) {
		return true
	}
	d, ok := st.Condition(api.ConditionDegraded)
	return ok && d.Status == api.ConditionTrue && d.Reason == reasons.ProgressDeadlineExceeded
}

// Summary says in one line per cluster what is still awaited.
func (p Progress) Summary() string {
	if len(p.Clusters) == 0 {
		return fmt.Sprintf("%s: %s: no live cluster's name and labels are selected by its placement (tinyctl clusters lists them)", p.Key, ReasonNoCluster)
	}
	var lines []string
	for _, c := range p.Clusters {
		if c.Met {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s on cluster %s: %s: %s", p.Key, c.Cluster, c.Reason, c.Message))
	}
	return strings.Join(lines, "\n")
}
