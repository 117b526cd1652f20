// Package progress judges how far one revision of a component has got on
// the clusters its placement selects: what apply --wait and status
// --wait-for wait on. It is pure: the caller reads the buckets.
package progress

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/reasons"
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

// Of judges t by the component's latest value (latest: its placement),
// the status records the clusters wrote of it and the clusters that are
// live: which of them its placement selects, and whether each reports
// condition cond True at its revision.
func Of(latest api.Component, records []api.Status, live []cluster.Identity, t Target, cond string) Progress {
	p := Progress{Target: t}
	byCluster := map[string]*api.Status{}
	for i := range records {
		if r := &records[i]; r.Component == t.Key {
			byCluster[r.Cluster] = r
		}
	}
	for _, name := range placedOn(latest, live) {
		c := Cluster{Cluster: name}
		rec := byCluster[name]
		switch {
		case rec == nil:
			c.Reason, c.Message = ReasonNotReconciled, "no status reported yet"
		case rec.ObservedRevision < t.Revision:
			c.ObservedRevision, c.Reason = rec.ObservedRevision, ReasonNotReconciled
			c.Message = fmt.Sprintf("reports revision %d, not yet %d", rec.ObservedRevision, t.Revision)
		default:
			c.ObservedRevision = rec.ObservedRevision
			c.Met = rec.IsTrue(cond)
			c.Reason, c.Message = why(*rec, cond)
			p.Failed = p.Failed || hopeless(*rec)
		}
		p.Clusters = append(p.Clusters, c)
	}
	p.Done = len(p.Clusters) > 0 && !slices.ContainsFunc(p.Clusters, func(c Cluster) bool { return !c.Met })
	return p
}

// placedOn returns the clusters of live that comp's placement selects,
// sorted.
func placedOn(comp api.Component, live []cluster.Identity) []string {
	var out []string
	for _, id := range live {
		if id.Places(comp) {
			out = append(out, id.Name)
		}
	}
	slices.Sort(out)
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
