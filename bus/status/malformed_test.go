package status_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestMalformedRecordsOfAnyClusterDoNotFailListing: a status record and a
// heartbeat that do not decode (written by anything with bucket access)
// leave every listing working: the bad record is reported with Err, the
// bad heartbeat reads as none, and other records are unaffected.
func TestMalformedRecordsOfAnyClusterDoNotFailListing(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	store, err := status.Open(ctx, natstest.BusConnect(t, s.BusConfig(), nil), status.Config{}, kv.Ensure)
	testenv.Must(t, err)
	good := api.Status{Component: "ns.good", Cluster: "east", ObservedRevision: 1}
	_, err = store.Put(ctx, good)
	testenv.Must(t, err)
	_, err = store.Beat(ctx, cluster.Heartbeat{Cluster: "east"}, 30*time.Second)
	testenv.Must(t, err)

	js, err := jetstream.New(s.Connect(t))
	testenv.Must(t, err)
	for bucket, key := range map[string]string{
		status.DefaultBucket: "ns.bad.east", status.DefaultHeartbeatBucket: "west",
	} {
		b, err := js.KeyValue(ctx, bucket)
		testenv.Must(t, err)
		_, err = b.Put(ctx, key, []byte("{not json"))
		testenv.Must(t, err)
	}

	recs, err := store.ListCluster(ctx, "east")
	if err != nil {
		t.Fatalf("ListCluster with a malformed record: %v", err)
	}
	var ok, bad int
	for _, r := range recs {
		if r.Err != nil {
			bad++
		} else if r.Component == "ns.good" {
			ok++
		}
	}
	if ok != 1 || bad != 1 {
		t.Errorf("ListCluster = %d good, %d undecodable records; want 1 and 1", ok, bad)
	}
	beats, err := store.Heartbeats(ctx)
	if err != nil {
		t.Fatalf("Heartbeats with a malformed one: %v", err)
	}
	if _, has := beats["west"]; has || len(beats) != 1 {
		t.Errorf("Heartbeats = %v, want only east's", beats)
	}
}
