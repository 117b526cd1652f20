package reconcile

import (
	"fmt"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/apply"
)

func TestConditionTransitions(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	invalid := fmt.Errorf("decode: %w", api.ErrInvalid)
	waiting := fmt.Errorf("ScaledObject: %w", apply.ErrKindNotInstalled)
	status := func(err error, at time.Time, prev *api.Status) api.Status {
		return nextStatus(prev, api.Status{Component: "media.resizer", Cluster: "east", Conditions: conditions(err)}, at)
	}
	ready := status(nil, t0, nil)
	tests := []struct {
		name string
		prev *api.Status
		err  error
		// want are Ready and Stalled: status, reason, transition time.
		want [2]struct {
			s  api.ConditionStatus
			r  string
			at time.Time
		}
	}{
		{name: "first success", err: nil, want: [2]struct {
			s  api.ConditionStatus
			r  string
			at time.Time
		}{{api.ConditionTrue, reasons.Reconciled, t1}, {api.ConditionFalse, reasons.Reconciled, t1}}},
		{name: "success again keeps the transition times", prev: &ready, err: nil, want: [2]struct {
			s  api.ConditionStatus
			r  string
			at time.Time
		}{{api.ConditionTrue, reasons.Reconciled, t0}, {api.ConditionFalse, reasons.Reconciled, t0}}},
		{name: "an invalid revision turns Ready False and Stalled True now", prev: &ready, err: invalid, want: [2]struct {
			s  api.ConditionStatus
			r  string
			at time.Time
		}{{api.ConditionFalse, reasons.InvalidSpec, t1}, {api.ConditionTrue, reasons.InvalidSpec, t1}}},
		{name: "waiting is not stalled: Stalled keeps its time", prev: &ready, err: waiting, want: [2]struct {
			s  api.ConditionStatus
			r  string
			at time.Time
		}{{api.ConditionFalse, reasons.KindNotInstalled, t1}, {api.ConditionFalse, reasons.KindNotInstalled, t0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := status(tt.err, t1, tt.prev)
			for i, typ := range []string{api.ConditionReady, api.ConditionStalled} {
				c, ok := got.Condition(typ)
				w := tt.want[i]
				if !ok || c.Status != w.s || c.Reason != w.r || !c.LastTransitionTime.Equal(w.at) {
					t.Errorf("%s = %+v, want %s %s at %s", typ, c, w.s, w.r, w.at)
				}
			}
			if !got.UpdatedAt.Equal(t1) {
				t.Errorf("updatedAt %s, want %s", got.UpdatedAt, t1)
			}
		})
	}
	if again := status(nil, t1, &ready); !again.SameAs(ready) {
		t.Fatalf("success after success %+v differs from %+v: it would be written again", again, ready)
	}
}
