package reconcile

import (
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/workload"
)

// conditions are Ready, Applied, Degraded and Stalled for the outcome err
// of a reconcile and the health h of the workload (nil: not judged, and
// Ready says what Applied says).
func conditions(err error, h *workload.Health) []api.Condition {
	applied := api.Condition{Type: api.ConditionApplied, Status: api.ConditionTrue, Reason: reasons.Reconciled, Message: "every child is applied"}
	stalled := api.Condition{Type: api.ConditionStalled, Status: api.ConditionFalse, Reason: reasons.Reconciled}
	if err != nil {
		class, reason := Classify(err)
		applied = api.Condition{Type: api.ConditionApplied, Status: api.ConditionFalse, Reason: reason, Message: err.Error()}
		stalled.Reason = reason
		if class == Permanent {
			stalled.Status = api.ConditionTrue
			stalled.Message = "not retried until a new revision is published"
		}
	}
	ready := applied
	ready.Type = api.ConditionReady
	if h == nil {
		return []api.Condition{ready, applied, stalled}
	}
	if err == nil {
		ready = api.Condition{Type: api.ConditionReady, Status: api.ConditionFalse, Reason: h.Reason, Message: h.Message}
		if h.Ready {
			ready.Status = api.ConditionTrue
		}
	}
	degraded := api.Condition{Type: api.ConditionDegraded, Status: api.ConditionFalse, Reason: h.Reason}
	if h.Degraded {
		degraded.Status, degraded.Message = api.ConditionTrue, h.Message
	}
	return []api.Condition{ready, applied, degraded, stalled}
}

// orphanedConditions say that children exist without a spec.
func orphanedConditions() []api.Condition {
	return []api.Condition{{
		Type: api.ConditionOrphaned, Status: api.ConditionTrue, Reason: reasons.SpecMissing,
		Message: "children exist but the spec bucket holds neither a value nor a delete marker for this key; " +
			"they are kept: publish the spec again, or delete them by hand",
	}}
}

// nextStatus is the status to record: next stamped at now, keeping the
// transition time of every condition whose status prev already had.
//
// Not metav1.Condition with meta.SetStatusCondition: api.Condition has
// metav1.Condition's JSON names, but it is the status bucket's wire
// format, where metav1.Time would cut times to seconds and write an empty
// reason and message; and SetStatusCondition merges into the old list,
// keeping a Degraded or Orphaned that no longer applies, where the set of
// conditions is replaced here.
func nextStatus(prev *api.Status, next api.Status, now time.Time) api.Status {
	next.UpdatedAt = now
	for i := range next.Conditions {
		c := &next.Conditions[i]
		c.LastTransitionTime = now
		if prev == nil {
			continue
		}
		if old, ok := prev.Condition(c.Type); ok && old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
	}
	return next
}
