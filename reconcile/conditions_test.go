package reconcile

import (
	"fmt"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/workload"
)

func TestConditionTransitions(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	invalid := fmt.Errorf("decode: %w", api.ErrInvalid)
	waiting := fmt.Errorf("ScaledObject: %w", apply.ErrKindNotInstalled)
	status := func(err error, at time.Time, prev *api.Status) api.Status {
		return nextStatus(prev, api.Status{Component: "media.resizer", Cluster: "east", Conditions: conditions(err, nil)}, at)
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

// TestReadyIsJudgedOnTheWorkload: once every child is applied, Ready and
// Degraded say what the workload does; while an apply fails, Ready says
// why, whatever the old pods do, and Degraded still reports them.
func TestReadyIsJudgedOnTheWorkload(t *testing.T) {
	pulling := &workload.Health{Degraded: true, Reason: reasons.ImagePullBackOff, Message: `pod p cannot pull image "x" (container worker)`}
	running := &workload.Health{Ready: true, Reason: reasons.Available, Message: "2 of 2 replicas updated and available"}
	waiting := fmt.Errorf("ScaledObject: %w", apply.ErrKindNotInstalled)
	type want struct {
		typ    string
		status api.ConditionStatus
		reason string
	}
	tests := []struct {
		name string
		err  error
		h    *workload.Health
		want []want
	}{
		{"applied and running", nil, running, []want{
			{api.ConditionReady, api.ConditionTrue, reasons.Available}, {api.ConditionApplied, api.ConditionTrue, reasons.Reconciled},
			{api.ConditionDegraded, api.ConditionFalse, reasons.Available}, {api.ConditionStalled, api.ConditionFalse, reasons.Reconciled}}},
		{"applied, image cannot be pulled", nil, pulling, []want{
			{api.ConditionReady, api.ConditionFalse, reasons.ImagePullBackOff}, {api.ConditionApplied, api.ConditionTrue, reasons.Reconciled},
			{api.ConditionDegraded, api.ConditionTrue, reasons.ImagePullBackOff}, {api.ConditionStalled, api.ConditionFalse, reasons.Reconciled}}},
		{"not applied, old pods running", waiting, running, []want{
			{api.ConditionReady, api.ConditionFalse, reasons.KindNotInstalled}, {api.ConditionApplied, api.ConditionFalse, reasons.KindNotInstalled},
			{api.ConditionDegraded, api.ConditionFalse, reasons.Available}}},
		{"no workload health: Ready is Applied", nil, nil, []want{
			{api.ConditionReady, api.ConditionTrue, reasons.Reconciled}, {api.ConditionApplied, api.ConditionTrue, reasons.Reconciled}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := api.Status{Conditions: conditions(tt.err, tt.h)}
			for _, w := range tt.want {
				if c, ok := st.Condition(w.typ); !ok || c.Status != w.status || c.Reason != w.reason {
					t.Errorf("%s = %+v, want %s %s", w.typ, c, w.status, w.reason)
				}
			}
			if _, ok := st.Condition(api.ConditionDegraded); ok != (tt.h != nil) {
				t.Errorf("Degraded present %v, want %v", ok, tt.h != nil)
			}
		})
	}
}
