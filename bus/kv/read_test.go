package kv_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestLatestFromLeaderReadsWhatLatestReads: the leader's answer (the
// stream's message get, not a direct get) gives the same revision, value
// and operation as Latest for a put, a delete marker and a purge marker,
// and not found for a key never written.
func TestLatestFromLeaderReadsWhatLatestReads(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	specs := natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil))
	_, err := specs.Put(ctx, "ns.put", []byte("v2"))
	testenv.Must(t, err)
	_, err = specs.Put(ctx, "ns.deleted", []byte("x"))
	testenv.Must(t, err)
	testenv.Must(t, specs.Delete(ctx, "ns.deleted", 0))
	_, err = specs.Put(ctx, "ns.purged", []byte("y"))
	testenv.Must(t, err)
	testenv.Must(t, specs.Purge(ctx, "ns.purged", 0))
	for key, op := range map[string]kv.Op{"ns.put": kv.OpPut, "ns.deleted": kv.OpDelete, "ns.purged": kv.OpPurge} {
		want, err := specs.Latest(ctx, key)
		testenv.Must(t, err)
		got, err := specs.LatestFromLeader(ctx, key)
		testenv.Must(t, err)
		if got.Revision != want.Revision || string(got.Value) != string(want.Value) || got.Op != op || want.Op != op || !got.Created.Equal(want.Created) {
			t.Errorf("%s: from the leader %+v, direct %+v, want op %v", key, got, want, op)
		}
	}
	if _, err := specs.LatestFromLeader(ctx, "ns.never"); !errors.Is(err, bus.ErrNotFound) {
		t.Errorf("a key never written: %v, want bus.ErrNotFound", err)
	}
}

// TestGetRevisionFromLeaderReadsWhatGetRevisionReads: the leader's
// answer for a revision is the direct get's, and a revision that is a
// marker, belongs to another key or does not exist is not found, as
// GetRevision says.
func TestGetRevisionFromLeaderReadsWhatGetRevisionReads(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	ctx := testenv.Ctx(t, 20*time.Second)
	specs := natstest.OpenSpecs(t, natstest.BusConnect(t, s.BusConfig(), nil))
	first, err := specs.Put(ctx, "ns.a", []byte("v1"))
	testenv.Must(t, err)
	other, err := specs.Put(ctx, "ns.b", []byte("b"))
	testenv.Must(t, err)
	second, err := specs.Put(ctx, "ns.a", []byte("v2"))
	testenv.Must(t, err)
	testenv.Must(t, specs.Delete(ctx, "ns.a", 0))
	marker, err := specs.Latest(ctx, "ns.a")
	testenv.Must(t, err)
	for _, rev := range []uint64{first, second} {
		want, err := specs.GetRevision(ctx, "ns.a", rev)
		testenv.Must(t, err)
		got, err := specs.GetRevisionFromLeader(ctx, "ns.a", rev)
		testenv.Must(t, err)
		if got.Revision != rev || string(got.Value) != string(want.Value) || got.Op != kv.OpPut || !got.Created.Equal(want.Created) {
			t.Errorf("revision %d: from the leader %+v, direct %+v", rev, got, want)
		}
	}
	for what, rev := range map[string]uint64{"a delete marker": marker.Revision, "another key's": other, "past the end": marker.Revision + 10} {
		if _, err := specs.GetRevisionFromLeader(ctx, "ns.a", rev); !errors.Is(err, bus.ErrNotFound) {
			t.Errorf("%s revision %d: %v, want bus.ErrNotFound", what, rev, err)
		}
		if _, err := specs.GetRevision(ctx, "ns.a", rev); !errors.Is(err, bus.ErrNotFound) {
			t.Errorf("direct, %s revision %d: %v, want bus.ErrNotFound", what, rev, err)
		}
	}
}
