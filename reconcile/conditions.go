package reconcile

import (
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
)

// conditions are Ready and Stalled for the outcome err of a reconcile.
func conditions(err error) []api.Condition {
	if err == nil {
		return []api.Condition{
			{Type: api.ConditionReady, Status: api.ConditionTrue, Reason: reasons.Reconciled, Message: "every child is applied"},
			{Type: api.ConditionStalled, Status: api.ConditionFalse, Reason: reasons.Reconciled},
		}
	}
	class, reason := Classify(err)
	stalled := api.Condition{Type: api.ConditionStalled, Status: api.ConditionFalse, Reason: reason}
	if class == Permanent {
		stalled.Status = api.ConditionTrue
		stalled.Message = "not retried until a new revision is published"
	}
	return []api.Condition{
		{Type: api.ConditionReady, Status: api.ConditionFalse, Reason: reason, Message: err.Error()},
		stalled,
	}
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
