package jscluster_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/internal/testkit/natscluster"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestABucketWithOneReplicaIsRefusedUntilEditedInPlace: a bucket made with
// one replica (by a first `tinyctl apply`, or a controller before
// --replicas 3) is refused by a controller that wants three, with the fix
// in the message; after that fix, the replicas raised in place, it is
// accepted and keeps its keys.
func TestABucketWithOneReplicaIsRefusedUntilEditedInPlace(t *testing.T) {
	nc := natscluster.Start(t, natscluster.BuildServer(t), 3)
	conn := natstest.BusConnect(t, bus.Config{URLs: nc.URLs()}, nil)
	ctx := testenv.Ctx(t, time.Minute)
	one, err := kv.Open(ctx, conn, kv.Config{Bucket: "upgraded"}, kv.Ensure)
	testenv.Must(t, err)
	var rev uint64
	testenv.Eventually(t, 20*time.Second, func() (err error) { // a new stream may still elect its leader
		rev, err = one.Put(ctx, "kept", []byte("v1"))
		return err
	})

	_, err = kv.Open(ctx, conn, kv.Config{Bucket: "upgraded", Replicas: 3}, kv.Ensure)
	var cfgErr *kv.BucketConfigError
	if !errors.As(err, &cfgErr) || !strings.Contains(err.Error(), "nats stream edit KV_upgraded --replicas 3") {
		t.Fatalf("open with 3 replicas: got %v, want a BucketConfigError naming the edit", err)
	}

	// What `nats stream edit KV_upgraded --replicas 3` sends.
	s, err := conn.JetStream().Stream(ctx, "KV_upgraded")
	testenv.Must(t, err)
	cfg := s.CachedInfo().Config
	cfg.Replicas = 3
	_, err = conn.JetStream().UpdateStream(ctx, cfg)
	testenv.Must(t, err)

	var three *kv.Bucket
	testenv.Eventually(t, 30*time.Second, func() error {
		three, err = kv.Open(ctx, conn, kv.Config{Bucket: "upgraded", Replicas: 3}, kv.Ensure)
		return err
	})
	e, err := three.Get(ctx, "kept")
	testenv.Must(t, err)
	if string(e.Value) != "v1" || e.Revision != rev {
		t.Fatalf("key after the edit: %q at %d, want v1 at %d", e.Value, e.Revision, rev)
	}
}
