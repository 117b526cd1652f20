package reconcile

import (
	"fmt"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
)

// suspendedMessage says what a suspended component's status means.
func suspendedMessage(rev uint64) string {
	return fmt.Sprintf("revision %d is suspended (spec.suspend): tinyctl applies, reverts and prunes nothing of this component "+
		"here until it is resumed (tinyctl resume); an explicit delete still removes it. Worker credentials are not renewed meanwhile", rev)
}

// suspended reports whether c is suspended here: spec.suspend as the
// overrides that select this cluster set it (resolved, or err when they
// conflict: then the spec's own value, and the conflict is reported once
// the component is resumed).
func suspended(c, resolved api.Component, err error) bool {
	if err == nil {
		return resolved.Spec.Suspend
	}
	return c.Spec.Suspend
}

// suspendedStatus is the status recorded for a planSuspend: the record of
// what the cluster last applied (revision, labels, children, all still in
// place) with Applied False and reason Suspended; Ready and Degraded say
// what they said (the workload runs on). A component never applied here
// records the revision, not Ready.
func suspendedStatus(in input, p plan) api.Status {
	applied := api.Condition{Type: api.ConditionApplied, Status: api.ConditionFalse, Reason: reasons.Suspended, Message: suspendedMessage(p.rev)}
	stalled := api.Condition{Type: api.ConditionStalled, Status: api.ConditionFalse, Reason: reasons.Suspended}
	if in.prev == nil {
		ready := applied
		ready.Type = api.ConditionReady
		return api.Status{Component: p.key, Cluster: in.cluster.Name, ObservedRevision: p.rev, SpecBucket: in.bucket,
			ClusterLabels: in.cluster.Labels, Conditions: []api.Condition{ready, applied, stalled}}
	}
	st := *in.prev
	st.Error = ""
	conds := []api.Condition{}
	for _, c := range in.prev.Conditions {
		if c.Type == api.ConditionReady || c.Type == api.ConditionDegraded {
			conds = append(conds, c)
		}
	}
	st.Conditions = append(conds, applied, stalled)
	return st
}
