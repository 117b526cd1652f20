package client

import (
	"slices"
	"testing"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// TestWithoutKEDAPicksScaledComponentsInClustersReportingNoOperator checks
// only a scaled component in a live cluster that reports KEDA absent is
// picked: not a plain component, not a cluster that runs KEDA, could not
// tell, or went stale.
func TestWithoutKEDAPicksScaledComponentsInClustersReportingNoOperator(t *testing.T) {
	scaled := []byte(`{"spec":{"image":"a","scaling":{"maxReplicas":3}}}`)
	plain := []byte(`{"spec":{"image":"a","replicas":2}}`)
	keda := func(r StatusRecord, s cluster.KEDAState) StatusRecord {
		if r.Heartbeat != nil {
			hb := *r.Heartbeat
			hb.KEDA = s
			r.Heartbeat = &hb
		}
		return r
	}
	snap := Snapshot{
		Components: revisionsOf([]kv.Entry{{Key: "m.scaled", Revision: 1, Value: scaled}, {Key: "m.plain", Revision: 2, Value: plain}}),
		Statuses: []StatusRecord{
			keda(record("m.scaled", "absent", 1, api.ConditionTrue, true), cluster.KEDAAbsent),
			keda(record("m.plain", "absent", 2, api.ConditionTrue, true), cluster.KEDAAbsent),
			keda(record("m.scaled", "running", 1, api.ConditionTrue, true), cluster.KEDARunning),
			keda(record("m.scaled", "unknown", 1, api.ConditionTrue, true), ""),
			keda(record("m.scaled", "stale", 1, api.ConditionTrue, false), cluster.KEDAAbsent),
		},
	}
	var got []string
	for _, r := range WithoutKEDA(snap, Rows(snap, Selector{})) {
		got = append(got, r.Key+"@"+r.Cluster())
	}
	if want := []string{"m.scaled@absent"}; !slices.Equal(got, want) {
		t.Errorf("WithoutKEDA = %v, want %v", got, want)
	}
}
