package progress

import (
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/reasons"
)

func TestOf(t *testing.T) {
	// The live clusters (north went stale: the caller leaves it out).
	live := []cluster.Identity{{Name: "east", Labels: map[string]string{"env": "prod"}}, {Name: "west", Labels: map[string]string{"env": "dev"}}}
	spec := func(placement string) api.Component {
		c, err := decode.Component([]byte(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component",` +
			`"metadata":{"name":"resizer","namespace":"media"},"spec":{"image":"r:1","jobs":{"subjects":["media.r"]}` + placement + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	record := func(cluster string, rev uint64, conds ...api.Condition) api.Status {
		return api.Status{Component: "media.resizer", Cluster: cluster, ObservedRevision: rev, Conditions: conds}
	}
	ready := api.Condition{Type: api.ConditionReady, Status: api.ConditionTrue, Reason: reasons.Available}
	pulling := api.Condition{Type: api.ConditionReady, Status: api.ConditionFalse, Reason: reasons.ImagePullBackOff, Message: "pod x cannot pull"}
	stalled := api.Condition{Type: api.ConditionStalled, Status: api.ConditionTrue, Reason: reasons.InvalidSpec}
	target := Target{Key: "media.resizer", Revision: 7}
	tests := []struct {
		name         string
		spec         api.Component
		records      []api.Status
		done, failed bool
		clusters     int
		summary      string
	}{
		{"every live cluster ready", spec(""), []api.Status{record("east", 7, ready), record("west", 8, ready)}, true, false, 2, ""},
		{"one behind", spec(""), []api.Status{record("east", 7, ready), record("west", 6, ready)}, false, false, 2,
			"media.resizer on cluster west: NotReconciled: reports revision 6, not yet 7"},
		{"one not reported", spec(""), []api.Status{record("east", 7, ready)}, false, false, 2, "on cluster west: NotReconciled: no status reported yet"},
		{"placement leaves one out", spec(`,"placement":{"clusterSelector":{"matchLabels":{"env":"prod"}}}`), []api.Status{record("east", 7, ready)}, true, false, 1, ""},
		{"image cannot be pulled", spec(""), []api.Status{record("east", 7, ready), record("west", 7, pulling)}, false, false, 2,
			"on cluster west: ImagePullBackOff: pod x cannot pull"},
		{"stalled fails", spec(""), []api.Status{record("east", 7, ready), record("west", 7, pulling, stalled)}, false, true, 2, "ImagePullBackOff"},
		{"no cluster placed", spec(`,"placement":{"clusters":["south"]}`), nil, false, false, 0, "NoCluster: no live cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Of(tt.spec, tt.records, live, target, api.ConditionReady)
			if p.Done != tt.done || p.Failed != tt.failed || len(p.Clusters) != tt.clusters || !strings.Contains(p.Summary(), tt.summary) {
				t.Errorf("Of = done %v failed %v %d clusters, summary %q; want done %v failed %v %d clusters, summary containing %q",
					p.Done, p.Failed, len(p.Clusters), p.Summary(), tt.done, tt.failed, tt.clusters, tt.summary)
			}
		})
	}
}
