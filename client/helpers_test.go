package client

import (
	"context"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
)

// openStore starts a NATS server and opens the default spec bucket on it.
func openStore(t *testing.T) (context.Context, *specs.Store) {
	t.Helper()
	s := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	conn, err := bus.NewConn(s.Connect(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := specs.Open(ctx, conn, specs.Config{}, kv.Ensure)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, store
}

func put(t *testing.T, ctx context.Context, s *specs.Store, key, value string) uint64 {
	t.Helper()
	rev, err := s.Put(ctx, key, []byte(value))
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func entry(rev uint64, op kv.Op, value string) kv.Entry {
	return kv.Entry{Key: "media.resizer", Revision: rev, Op: op, Value: []byte(value)}
}
