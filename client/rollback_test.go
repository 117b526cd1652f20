package client

import (
	"errors"
	"testing"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

func TestTargetPicksTheRevisionToRestore(t *testing.T) {
	tests := []struct {
		name    string
		hist    []kv.Entry
		to      uint64
		want    uint64
		wantErr string
	}{
		{"previous put", []kv.Entry{entry(1, kv.OpPut, "a"), entry(2, kv.OpPut, "b")}, 0, 1, ""},
		{"skips earlier puts of the same value", []kv.Entry{entry(1, kv.OpPut, "a"), entry(2, kv.OpPut, "b"), entry(3, kv.OpPut, "b")}, 0, 1, ""},
		{"after a delete: the last put (undelete)", []kv.Entry{entry(1, kv.OpPut, "a"), entry(2, kv.OpPut, "b"), entry(3, kv.OpDelete, "")}, 0, 2, ""},
		{"explicit revision", []kv.Entry{entry(1, kv.OpPut, "a"), entry(2, kv.OpPut, "b"), entry(3, kv.OpPut, "c")}, 1, 1, ""},
		{"only one value", []kv.Entry{entry(1, kv.OpPut, "a")}, 0, 0,
			"no revision to roll back to: no earlier revision holds a different value (kept revisions: 1)"},
		{"explicit revision not kept", []kv.Entry{entry(4, kv.OpPut, "a"), entry(5, kv.OpPut, "b")}, 2, 0,
			"no revision to roll back to: revision 2 is not in the component's history (kept revisions: 4, 5)"},
		{"explicit revision is a marker", []kv.Entry{entry(1, kv.OpPut, "a"), entry(2, kv.OpDelete, "")}, 2, 0,
			"no revision to roll back to: revision 2 is a delete marker, not a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := target(tt.hist, tt.to)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrNoTarget) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.Revision != tt.want {
				t.Fatalf("got revision %d (%v), want %d", got.Revision, err, tt.want)
			}
		})
	}
}

func TestRollbackRestoresAsANewRevision(t *testing.T) {
	ctx, s := openStore(t)
	put(t, ctx, s, "media.resizer", "v1")
	put(t, ctx, s, "media.resizer", "v2")
	res, err := rollback(ctx, s, "media.resizer", 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Target != 1 || res.Revision != 3 || res.Unchanged {
		t.Errorf("got %+v, want target 1 restored as revision 3", res)
	}
	if e, _ := s.Get(ctx, "media.resizer"); string(e.Value) != "v1" || e.Revision != 3 {
		t.Errorf("key holds %q at %d, want v1 at 3", e.Value, e.Revision)
	}
	res, err = rollback(ctx, s, "media.resizer", 3)
	if err != nil || !res.Unchanged || res.Revision != 3 {
		t.Errorf("rollback to the current value: %+v, %v; want unchanged at 3", res, err)
	}
}

func TestRollbackOfAnUnknownKeyIsNotFound(t *testing.T) {
	ctx, s := openStore(t)
	_, err := rollback(ctx, s, "media.nothing", 0)
	if !errors.Is(err, bus.ErrNotFound) {
		t.Errorf("err = %v, want bus.ErrNotFound", err)
	}
}
