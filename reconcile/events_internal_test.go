package reconcile

import (
	"errors"
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/workload"
)

// status is a record of key at rev with the conditions a reconcile that
// returned err, with workload health h, would write.
func statusOf(rev uint64, err error, h *workload.Health) api.Status {
	return api.Status{Component: "media.resizer", ObservedRevision: rev, Conditions: conditions(err, h)}
}

func TestConditionEventsAnnounceWhatMovedOncePerReason(t *testing.T) {
	progressing := &workload.Health{Reason: reasons.Progressing, Message: "waiting for 1 replica"}
	available := &workload.Health{Ready: true, Reason: reasons.Available}
	crashing := &workload.Health{Degraded: true, Reason: reasons.CrashLoopBackOff, Message: "container worker keeps exiting"}
	invalid := withClass(Permanent, reasons.InvalidSpec, errors.New("spec.image: Required value"))
	for _, tc := range []struct {
		name       string
		prev       *api.Status
		next       api.Status
		want       []string // "TYPE REASON"
		mentioning string
	}{
		{"a new component waits for its pods", nil, statusOf(1, nil, progressing), []string{"Normal Progressing"}, "waiting for 1 replica"},
		{"its pods run", ptr(statusOf(1, nil, progressing)), statusOf(1, nil, available), []string{"Normal Available"}, "Ready is True"},
		{"the same again says nothing", ptr(statusOf(1, nil, available)), statusOf(1, nil, available), nil, ""},
		{"a new revision's rollout", ptr(statusOf(1, nil, available)), statusOf(2, nil, progressing), []string{"Normal Progressing"}, ""},
		{"its pods crash: one warning, not Ready's and Degraded's", ptr(statusOf(2, nil, progressing)), statusOf(2, nil, crashing),
			[]string{"Warning CrashLoopBackOff"}, "keeps exiting"},
		{"recovered: Ready and Degraded both move", ptr(statusOf(2, nil, crashing)), statusOf(2, nil, available),
			[]string{"Normal Available"}, ""},
		{"an invalid revision: one warning naming the field", ptr(statusOf(2, nil, available)), statusOf(3, invalid, nil),
			[]string{"Warning InvalidSpec"}, "spec.image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := conditionEvents(tc.prev, tc.next)
			var got []string
			for _, e := range evs {
				got = append(got, e.Type+" "+e.Reason)
				if e.Component != "media.resizer" || e.Revision != tc.next.ObservedRevision {
					t.Errorf("event %+v: want component media.resizer at revision %d", e, tc.next.ObservedRevision)
				}
			}
			if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
				t.Errorf("events %v, want %v (all: %+v)", got, tc.want, evs)
			}
			if tc.mentioning != "" && (len(evs) == 0 || !strings.Contains(evs[0].Message, tc.mentioning)) {
				t.Errorf("events %+v: want the first to mention %q", evs, tc.mentioning)
			}
		})
	}
}

func TestARemovalSaysWhetherTheSpecWentOrThePlacementMoved(t *testing.T) {
	removed := removalEvent("media.resizer", 7, reasonRemoved, "east")
	unplaced := removalEvent("media.resizer", 8, reasonUnplaced, "east")
	if removed.Type != event.Normal || removed.Reason != "Removed" || !strings.Contains(removed.Message, "deleted") {
		t.Errorf("removal event %+v", removed)
	}
	if unplaced.Reason != "Unplaced" || !strings.Contains(unplaced.Message, "cluster east") || !strings.Contains(unplaced.Message, "stream kept") {
		t.Errorf("unplace event %+v", unplaced)
	}
}

func ptr[T any](v T) *T { return &v }
