package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
)

func TestOf(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	live := func(labels map[string]string) status.HeartbeatRecord {
		return status.HeartbeatRecord{Heartbeat: cluster.Heartbeat{Labels: labels, TTLSeconds: 30}, Received: now.Add(-time.Second)}
	}
	beats := map[string]status.HeartbeatRecord{
		"east":  live(map[string]string{"env": "prod"}),
		"west":  live(map[string]string{"env": "dev"}),
		"north": {Heartbeat: cluster.Heartbeat{TTLSeconds: 30}, Received: now.Add(-time.Hour)}, // stale
	}
	spec := func(placement string) []kv.Entry {
		return []kv.Entry{{Key: "media.resizer", Revision: 7, Value: []byte(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component",` +
			`"metadata":{"name":"resizer","namespace":"media"},"spec":{"image":"r:1","jobs":{"subjects":["media.r"]}` + placement + `}}`)}}
	}
	record := func(cluster string, rev uint64, conds ...api.Condition) status.Record {
		return status.Record{Status: api.Status{Component: "media.resizer", Cluster: cluster, ObservedRevision: rev, Conditions: conds}}
	}
	ready := api.Condition{Type: api.ConditionReady, Status: api.ConditionTrue, Reason: reasons.Available}
	pulling := api.Condition{Type: api.ConditionReady, Status: api.ConditionFalse, Reason: reasons.ImagePullBackOff, Message: "pod x cannot pull"}
	stalled := api.Condition{Type: api.ConditionStalled, Status: api.ConditionTrue, Reason: reasons.InvalidSpec}
	target := Target{Key: "media.resizer", Revision: 7}
	tests := []struct {
		name         string
		specs        []kv.Entry
		records      []status.Record
		done, failed bool
		clusters     int
		summary      string
	}{
		{"every live cluster ready", spec(""), []status.Record{record("east", 7, ready), record("west", 8, ready)}, true, false, 2, ""},
		{"one behind", spec(""), []status.Record{record("east", 7, ready), record("west", 6, ready)}, false, false, 2,
			"media.resizer on cluster west: NotReconciled: reports revision 6, not yet 7"},
		{"one not reported", spec(""), []status.Record{record("east", 7, ready)}, false, false, 2, "on cluster west: NotReconciled: no status reported yet"},
		{"placement leaves one out", spec(`,"placement":{"clusterSelector":{"matchLabels":{"env":"prod"}}}`), []status.Record{record("east", 7, ready)}, true, false, 1, ""},
		{"image cannot be pulled", spec(""), []status.Record{record("east", 7, ready), record("west", 7, pulling)}, false, false, 2,
			"on cluster west: ImagePullBackOff: pod x cannot pull"},
		{"stalled fails", spec(""), []status.Record{record("east", 7, ready), record("west", 7, pulling, stalled)}, false, true, 2, "ImagePullBackOff"},
		{"no cluster placed", spec(`,"placement":{"clusters":["south"]}`), nil, false, false, 0, "NoCluster: no live cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Of(tt.specs, tt.records, beats, target, api.ConditionReady, now)
			if p.Done != tt.done || p.Failed != tt.failed || len(p.Clusters) != tt.clusters || !strings.Contains(p.Summary(), tt.summary) {
				t.Errorf("Of = done %v failed %v %d clusters, summary %q; want done %v failed %v %d clusters, summary containing %q",
					p.Done, p.Failed, len(p.Clusters), p.Summary(), tt.done, tt.failed, tt.clusters, tt.summary)
			}
		})
	}
}
