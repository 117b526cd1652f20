package client

import (
	"cmp"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// stalledMark stands for Ready False with Stalled True in these tests.
const stalledMark = "Stalled"

func spec(key string, rev uint64) Revision {
	return Revision{Key: key, Revision: rev, Operation: opPut}
}

// record is a status of key in cluster at observed, with the Ready status
// ("Stalled" for a permanent failure), heartbeat live or not.
func record(key, name string, observed uint64, ready api.ConditionStatus, live bool) StatusRecord {
	stalled := api.ConditionFalse
	if string(ready) == stalledMark {
		ready, stalled = api.ConditionFalse, api.ConditionTrue
	}
	r := StatusRecord{Status: api.Status{Component: key, Cluster: name, ObservedRevision: observed, UpdatedAt: now.Add(-time.Minute),
		Conditions: []api.Condition{{Type: api.ConditionReady, Status: api.ConditionStatus(ready), Reason: "R" + string(ready)}, {Type: api.ConditionStalled, Status: stalled}}}}
	if live {
		r.Heartbeat = &Heartbeat{Heartbeat: cluster.Heartbeat{Cluster: name, TTLSeconds: 30}, Received: now.Add(-10 * time.Second)}
	} else {
		r.Stale = true
	}
	return r
}

// summary renders rows as "key cluster ready reason observed/latest stale".
func summary(rows []Row) string {
	var out []string
	for _, r := range rows {
		ready := r.Ready()
		if r.Stalled() {
			ready = stalledMark
		}
		out = append(out, fmt.Sprintf("%s %s %s %s %d/%d %v", r.Key, cmp.Or(r.Cluster(), "-"), ready, r.Reason(), r.ObservedRevision(), r.LatestRevision, r.Stale()))
	}
	return strings.Join(out, "\n")
}

func TestRows(t *testing.T) {
	snap := Snapshot{
		Components: []Revision{spec("media.resizer", 5), spec("media.cropper", 2), spec("web.hook", 7)},
		Statuses: []StatusRecord{
			record("media.resizer", "west", 4, api.ConditionFalse, false),
			record("media.resizer", "east", 5, api.ConditionTrue, true),
			record("media.gone", "east", 3, stalledMark, true),
		},
	}
	tests := []struct {
		behaviour string
		sel       Selector
		want      []string
	}{
		{"every namespace: one row per cluster, a cluster-less row for components nobody reported on, sorted", Selector{}, []string{
			"media.cropper - Unknown NotReconciled 0/2 false",
			"media.gone east Stalled RFalse 3/0 false",
			"media.resizer east True RTrue 5/5 false",
			"media.resizer west False RFalse 4/5 true",
			"web.hook - Unknown NotReconciled 0/7 false",
		}},
		{"a namespace", Selector{Namespace: "web"}, []string{"web.hook - Unknown NotReconciled 0/7 false"}},
		{"one component", Selector{Namespace: "media", Name: "resizer"}, []string{
			"media.resizer east True RTrue 5/5 false",
			"media.resizer west False RFalse 4/5 true",
		}},
		{"a component that does not exist", Selector{Namespace: "media", Name: "nope"}, nil},
		{"a name in another namespace", Selector{Namespace: "web", Name: "resizer"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.behaviour, func(t *testing.T) {
			if got := summary(Rows(snap, tt.sel)); got != strings.Join(tt.want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", got, strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestOrphansAreTheRowsReportedOrphaned(t *testing.T) {
	orphan := StatusRecord{Status: api.Status{Component: "media.gone", Cluster: "east", Conditions: []api.Condition{
		{Type: api.ConditionOrphaned, Status: api.ConditionTrue, Reason: "SpecMissing", Message: "kept", LastTransitionTime: now.Add(-time.Hour)},
	}, Children: []api.Child{{Kind: "Deployment", Namespace: "media", Name: "gone"}, {Kind: "Stream", Name: "tinyctl_media_gone"}}}}
	snap := Snapshot{Statuses: []StatusRecord{record("media.resizer", "east", 5, api.ConditionTrue, true), orphan}}
	rows := Orphans(snap, Selector{})
	if len(rows) != 1 || rows[0].Key != "media.gone" || rows[0].Reason() != "SpecMissing" || !rows[0].OrphanedSince().Equal(now.Add(-time.Hour)) {
		t.Fatalf("orphans = %s", summary(rows))
	}
}

func TestNextExpiryIsWhenTheFirstLiveHeartbeatLapses(t *testing.T) {
	live := record("media.a", "east", 1, api.ConditionTrue, true) // received 10s ago, TTL 30s
	tests := []struct {
		behaviour string
		rows      []Row
		want      time.Duration
	}{
		{"no rows: no timer", nil, 0},
		{"only stale clusters: no timer", []Row{{Key: "a", Status: ptr.To(record("media.a", "west", 1, api.ConditionTrue, false))}}, 0},
		{"a component nobody reported on: no timer", []Row{{Key: "a"}}, 0},
		{"a live heartbeat: when it lapses", []Row{{Key: "a", Status: &live}}, 20*time.Second + expiryMargin},
	}
	for _, tt := range tests {
		t.Run(tt.behaviour, func(t *testing.T) {
			if got := nextExpiry(tt.rows, now); got != tt.want {
				t.Errorf("nextExpiry = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSameRowsIgnoresHeartbeatRenewalsOnly(t *testing.T) {
	a := record("media.a", "east", 1, api.ConditionTrue, true)
	renewed := a
	renewed.Heartbeat = &Heartbeat{Heartbeat: a.Heartbeat.Heartbeat, Received: now}
	lapsed := a
	lapsed.Stale = true
	newer := a
	newer.ObservedRevision = 2
	base := []Row{{Key: "media.a", LatestRevision: 1, Status: &a}}
	tests := []struct {
		behaviour string
		rows      []Row
		same      bool
	}{
		{"a renewed heartbeat", []Row{{Key: "media.a", LatestRevision: 1, Status: &renewed}}, true},
		{"a lapsed heartbeat", []Row{{Key: "media.a", LatestRevision: 1, Status: &lapsed}}, false},
		{"a new observed revision", []Row{{Key: "media.a", LatestRevision: 1, Status: &newer}}, false},
		{"a new spec revision", []Row{{Key: "media.a", LatestRevision: 2, Status: &a}}, false},
		{"a row more", append([]Row{{Key: "media.0", LatestRevision: 1}}, base...), false},
	}
	for _, tt := range tests {
		t.Run(tt.behaviour, func(t *testing.T) {
			if got := sameRows(base, tt.rows); got != tt.same {
				t.Errorf("sameRows = %v, want %v", got, tt.same)
			}
		})
	}
}
