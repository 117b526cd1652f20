package reconcile

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/workload"
)

// holdUnplace says why the children of comp, which does not select this
// cluster, must stay until an operator confirms (nil: unplace). Children
// go only when a new revision's placement stops selecting the cluster as
// it was when it applied the last one. They stay when
//   - the revision is the one this cluster applied (so the cluster's name
//     or labels changed, not the spec: a controller restarted with other
//     labels, an install re-run without them);
//   - a newer revision would still select the cluster under the labels it
//     had when it applied (the status record keeps them);
//   - children exist but this cluster has no status record for the
//     component (a renamed cluster, a lost status bucket), and from then
//     on for every revision (the record keeps HeldSince): which identity
//     applied them is not known.
func holdUnplace(in input, comp api.Component) error {
	prev := in.prev
	if prev == nil {
		if len(in.live) == 0 {
			return nil
		}
		return withClass(Permanent, reasons.UnplaceHeld, fmt.Errorf(
			"placement does not select cluster %s%s, but children of this component exist here and the cluster has no status record for it "+
				"(was the cluster renamed?): children kept; restart the controller with --accept-unplace to remove them",
			in.cluster.Name, labelText(in.cluster.Labels)))
	}
	if len(in.live) == 0 && len(prev.Children) == 0 {
		return nil
	}
	if prev.HeldSince != 0 {
		return withClass(Permanent, reasons.UnplaceHeld, fmt.Errorf(
			"placement of revision %d does not select cluster %s%s, and the cluster has kept this component's children since revision %d, "+
				"when it found them without a status record of its own (was the cluster renamed?): children kept; "+
				"give the cluster its old name back, or restart the controller with --accept-unplace to remove them",
			in.entry.rev, in.cluster.Name, labelText(in.cluster.Labels), prev.HeldSince))
	}
	was := prev.ClusterLabels
	if was == nil {
		was = in.cluster.Labels // a record from before labels were kept
	}
	if in.entry.rev > prev.ObservedRevision && !(cluster.Identity{Name: in.cluster.Name, Labels: was}).Places(comp) {
		return nil
	}
	return withClass(Permanent, reasons.UnplaceHeld, fmt.Errorf(
		"placement of revision %d does not select cluster %s%s, but it selects the cluster as it was when it applied revision %d%s: "+
			"the cluster's identity changed, not the spec, so its children are kept; "+
			"restore the cluster's name and labels, or restart the controller with --accept-unplace to remove them",
		in.entry.rev, in.cluster.Name, labelText(in.cluster.Labels), prev.ObservedRevision, labelText(was)))
}

// labelText is " (labels a=b,c=d)", or " (no labels)".
func labelText(l map[string]string) string {
	if len(l) == 0 {
		return " (no labels)"
	}
	return " (labels " + labels.Set(l).String() + ")"
}

// heldStatus is the status recorded for a planHold: the revision, labels
// and children the cluster last applied (all still in place), not Ready
// and Stalled with reason UnplaceHeld, saying why and what to do.
func heldStatus(in input, p plan) api.Status {
	st := api.Status{Component: p.key, Cluster: in.cluster.Name, ObservedRevision: p.rev,
		ClusterLabels: in.cluster.Labels, SpecBucket: in.bucket}
	if in.prev != nil {
		st = *in.prev
	} else {
		st.HeldSince = p.rev
	}
	st.Error, st.Conditions = p.err.Error(), conditions(p.err, nil)
	return st
}

// recordOf is the status a reconcile of plan p (apply or invalid) writes,
// with the children it manages and its error. An invalid revision applies
// nothing, so its record keeps what the cluster last applied and under
// which identity (labels, a held unplace): a later revision is judged
// against that, not against labels that changed since. An invalid
// revision of a component whose children exist here without a record of
// this cluster's (a renamed cluster) records the hold as begun (HeldSince),
// as a valid revision would have: which identity applied them is not known.
func recordOf(in input, p plan, kids []api.Child, err error, h *workload.Health) api.Status {
	st := api.Status{Component: p.key, Cluster: in.cluster.Name, ObservedRevision: p.rev, SpecBucket: in.bucket,
		ClusterLabels: in.cluster.Labels, Conditions: conditions(err, h), Children: kids}
	switch {
	case p.kind == planInvalid && in.prev != nil:
		st.ClusterLabels, st.HeldSince, st.Children = in.prev.ClusterLabels, in.prev.HeldSince, in.prev.Children
	case p.kind == planInvalid && len(in.live) > 0:
		st.HeldSince = p.rev
	}
	if err != nil {
		st.Error = err.Error()
	}
	return st
}
