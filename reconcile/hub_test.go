package reconcile

import (
	"slices"
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/reasons"
)

func TestARevisionOlderThanTheAppliedOneOfTheSameBucketIsNotApplied(t *testing.T) {
	const bucket = "2026-12-01T10:00:00Z"
	seen := func(rev uint64, bucket string) *api.Status {
		return &api.Status{Component: "media.resizer", Cluster: "east", ObservedRevision: rev, SpecBucket: bucket}
	}
	tests := []struct {
		name    string
		entry   specEntry
		prev    *api.Status
		bucket  string
		want    planKind
		message string // part of the hold's message
	}{
		{name: "newer revision", entry: specEntry{rev: 12}, prev: seen(10, bucket), bucket: bucket, want: planApply},
		{name: "same revision again (a resync)", entry: specEntry{rev: 10}, prev: seen(10, bucket), bucket: bucket, want: planApply},
		{name: "older revision, a mirror still copying", entry: specEntry{rev: 7}, prev: seen(10, bucket), bucket: bucket,
			want: planBehind, message: "revision 7 is older than revision 10"},
		{name: "a superseded delete is not carried out", entry: specEntry{rev: 8, deleted: true, deleteStream: true},
			prev: seen(10, bucket), bucket: bucket, want: planBehind},
		{name: "another bucket: revisions start over", entry: specEntry{rev: 2}, prev: seen(10, bucket),
			bucket: "2026-12-02T08:00:00Z", want: planApply},
		{name: "a mirror that does not know its hub bucket yet", entry: specEntry{rev: 7}, prev: seen(10, bucket),
			bucket: "?2026-12-02T09:00:00Z", want: planBehind},
		{name: "a record from before epochs", entry: specEntry{rev: 2}, prev: seen(10, ""), bucket: bucket, want: planApply},
		{name: "written after the bucket went back to 6", entry: specEntry{rev: 7}, prev: seen(10, bucket), bucket: bucket + "/6",
			want: planApply},
		{name: "held from before the bucket went back to 6", entry: specEntry{rev: 5}, prev: seen(10, bucket), bucket: bucket + "/6",
			want: planBehind},
		{name: "a record made after it went back", entry: specEntry{rev: 8}, prev: seen(9, bucket+"/6"), bucket: bucket + "/6",
			want: planBehind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.entry
			if !e.deleted {
				e.value = spec(t, "media", "resizer")
			}
			p := decide(input{key: "media.resizer", entry: e, cluster: cluster.Identity{Name: "east"}, prev: tt.prev, bucket: tt.bucket})
			if p.kind != tt.want {
				t.Fatalf("plan %s (%v), want %s", p.kind, p.err, tt.want)
			}
			if tt.want != planBehind {
				return
			}
			if _, reason := Classify(p.err); reason != reasons.RevisionBehind || !strings.Contains(p.err.Error(), tt.message) {
				t.Errorf("reason %s, error %q; want %s mentioning %q", reason, p.err, reasons.RevisionBehind, tt.message)
			}
			st := heldStatus(input{prev: tt.prev, bucket: tt.bucket}, p)
			if st.ObservedRevision != tt.prev.ObservedRevision || !st.IsTrue(api.ConditionStalled) {
				t.Errorf("status observes %d (stalled %t), want %d stalled", st.ObservedRevision, st.IsTrue(api.ConditionStalled), tt.prev.ObservedRevision)
			}
		})
	}
}

func TestComparingTheMirrorWithTheHub(t *testing.T) {
	const hub, older = "2026-12-02T08:00:00Z", "2026-12-01T10:00:00Z"
	keys := func(k ...string) map[string]bool {
		m := map[string]bool{}
		for _, x := range k {
			m[x] = true
		}
		return m
	}
	live := map[string]uint64{"media.a": 40, "media.b": 55, "media.c": 12}
	tests := []struct {
		name        string
		view        HubView
		live        map[string]uint64
		wantRebuild string // part of the reason ("" none)
		wantEpoch   string
		wantGone    []string
	}{
		{name: "in step", view: HubView{Epoch: hub, MirrorLast: 60, Hub: hub, HubFirst: 1, HubLast: 61,
			HubKeys: keys("media.a", "media.b", "media.c")}, live: live},
		{name: "hub out of reach", view: HubView{Epoch: hub, MirrorLast: 60}, live: live},
		{name: "mirror made without the hub", view: HubView{MirrorLast: 60, Hub: hub, HubLast: 61}, wantRebuild: "out of reach", wantEpoch: hub},
		{name: "hub bucket created again", view: HubView{Epoch: older, MirrorLast: 60, Hub: hub, HubFirst: 1, HubLast: 3},
			wantRebuild: "created again", wantEpoch: hub},
		{name: "hub bucket went back", view: HubView{Epoch: hub, MirrorLast: 60, Hub: hub, HubFirst: 1, HubLast: 50},
			wantRebuild: "went back to revision 50", wantEpoch: hub + "/50"},
		{name: "went back again", view: HubView{Epoch: hub + "/50", MirrorLast: 58, Hub: hub, HubFirst: 1, HubLast: 52},
			wantRebuild: "went back to revision 52", wantEpoch: hub + "/52"},
		{name: "a key purged at the hub (compacted delete)", view: HubView{Epoch: hub, MirrorLast: 60, Hub: hub, HubFirst: 3, HubLast: 61,
			HubKeys: keys("media.b", "media.c")}, live: live, wantGone: []string{"media.a"}},
		{name: "keys not asked for", view: HubView{Epoch: hub, MirrorLast: 60, Hub: hub, HubFirst: 3, HubLast: 61}, live: nil},
		{name: "the oldest key purged at the hub", view: HubView{Epoch: hub, MirrorLast: 60, Hub: hub, HubFirst: 50, HubLast: 61,
			HubKeys: keys("media.a", "media.b")}, live: live, wantGone: []string{"media.c"}},
		{name: "hub emptied: cannot tell", view: HubView{Epoch: hub, MirrorLast: 60, Hub: hub, HubFirst: 62, HubLast: 65,
			HubKeys: keys("media.d")}, live: live, wantRebuild: "purged up to revision 61", wantEpoch: hub},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judgeHub(tt.view, tt.live)
			if (v.rebuild == "") != (tt.wantRebuild == "") || !strings.Contains(v.rebuild, tt.wantRebuild) || v.epoch != tt.wantEpoch {
				t.Errorf("rebuild %q under %q, want %q under %q", v.rebuild, v.epoch, tt.wantRebuild, tt.wantEpoch)
			}
			if !slices.Equal(v.gone, tt.wantGone) {
				t.Errorf("gone %v, want %v", v.gone, tt.wantGone)
			}
		})
	}
}
