package statusview

import (
	"os"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// reported is cluster's status of key at observed with Ready ready,
// written a minute ago; live says the cluster's heartbeat is live.
func reported(key, name string, observed uint64, ready api.ConditionStatus, live bool) client.StatusRecord {
	r := client.StatusRecord{Status: api.Status{Component: key, Cluster: name, ObservedRevision: observed,
		UpdatedAt: now.Add(-time.Minute), Conditions: []api.Condition{
			{Type: api.ConditionReady, Status: ready, Reason: "R" + string(ready)},
			{Type: api.ConditionStalled, Status: api.ConditionFalse}}}}
	if live {
		r.Heartbeat = &client.Heartbeat{Heartbeat: cluster.Heartbeat{Cluster: name, TTLSeconds: 30}, Received: now.Add(-10 * time.Second)}
	} else {
		r.Stale = true
	}
	return r
}

func TestOrphanHintAndList(t *testing.T) {
	orphan := client.StatusRecord{Status: api.Status{Component: "media.gone", Cluster: "east", Conditions: []api.Condition{
		{Type: api.ConditionOrphaned, Status: api.ConditionTrue, Reason: "SpecMissing", Message: "kept", LastTransitionTime: now.Add(-time.Hour)},
	}, Children: []api.Child{{Kind: "Deployment", Namespace: "media", Name: "gone"}, {Kind: "Stream", Name: "tinyctl_media_gone"}}}}
	rows := client.Orphans(client.Snapshot{Statuses: []client.StatusRecord{orphan}}, client.Selector{})
	want := "media.gone in cluster east: publish its spec again (tinyctl apply -f FILE) and the controller adopts these children, " +
		"or delete them by hand: kubectl delete -n media deployment/gone; nats stream rm tinyctl_media_gone (deletes its queued jobs)"
	if got := Hint(rows[0]); got != want {
		t.Errorf("hint:\n%s\nwant:\n%s", got, want)
	}
	if list := NewOrphanList(nil); list.Items == nil || list.Kind != OrphanListKind {
		t.Errorf("empty orphan list = %+v, want items [] of kind %s", list, OrphanListKind)
	}
}

func ExampleWriteTable() {
	snap := client.Snapshot{
		Components: []client.Revision{{Key: "media.resizer", Revision: 5, Operation: "put"}, {Key: "media.cropper", Revision: 2, Operation: "put"}},
		Statuses: []client.StatusRecord{
			reported("media.resizer", "east", 5, api.ConditionTrue, true),
			reported("media.resizer", "west", 4, api.ConditionFalse, false),
		},
	}
	// A zero Style never colours, as off a terminal.
	_ = WriteTable(os.Stdout, cli.Style{}, client.Rows(snap, client.Selector{Namespace: "media"}), now)
	// Output:
	// NAMESPACE   NAME      CLUSTER   READY     REASON          REVISION   AGE   HEARTBEAT
	// media       cropper   -         Unknown   NotReconciled   -/2        -     -
	// media       resizer   east      True      RTrue           5/5        60s   live
	// media       resizer   west      False     RFalse          4/5        60s   stale
}
