package reconcile

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
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
//     component (a renamed cluster, a lost status bucket).
func holdUnplace(in input, comp api.Component) error {
	prev := in.prev
	if prev == nil {
		if len(in.live) == 0 {
			return nil
		}
		return withClass(Permanent, reasons.UnplaceHeld, fmt.Errorf(
			"placement does not select cluster %s%s, but children of this component exist here and the cluster has no status record for it "+
				"(was the cluster renamed?): children kept; restart the controller with --accept-unplace to remove them",
			in.cluster.name, labelText(in.cluster.labels)))
	}
	if len(in.live) == 0 && len(prev.Children) == 0 {
		return nil
	}
	was := prev.ClusterLabels
	if was == nil {
		was = in.cluster.labels // a record from before labels were kept
	}
	if in.entry.rev > prev.ObservedRevision && !Placed(comp, in.cluster.name, was) {
		return nil
	}
	return withClass(Permanent, reasons.UnplaceHeld, fmt.Errorf(
		"placement of revision %d does not select cluster %s%s, but it selects the cluster as it was when it applied revision %d%s: "+
			"the cluster's identity changed, not the spec, so its children are kept; "+
			"restore the cluster's name and labels, or restart the controller with --accept-unplace to remove them",
		in.entry.rev, in.cluster.name, labelText(in.cluster.labels), prev.ObservedRevision, labelText(was)))
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
	st := api.Status{Component: p.key, Cluster: in.cluster.name, ObservedRevision: p.rev,
		ClusterLabels: in.cluster.labels}
	if in.prev != nil {
		st = *in.prev
	}
	st.Error, st.Conditions = p.err.Error(), conditions(p.err)
	return st
}
