package client

import (
	"errors"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/bus"
)

func TestPublishCreatesConfiguresAndSkipsUnchanged(t *testing.T) {
	ctx, s := openStore(t)
	steps := []struct {
		name     string
		value    string
		opts     PublishOptions
		want     action.Action
		wantRev  uint64
		wantKeep uint64 // revision the key must be at afterwards
	}{
		{"dry run of a new key writes nothing", "v1", PublishOptions{DryRun: true}, action.Created, 0, 0},
		{"new key", "v1", PublishOptions{}, action.Created, 1, 1},
		{"same bytes: no new revision", "v1", PublishOptions{}, action.Unchanged, 1, 1},
		{"dry run of a change writes nothing", "v2", PublishOptions{DryRun: true}, action.Configured, 1, 1},
		{"change", "v2", PublishOptions{}, action.Configured, 2, 2},
		{"compare-and-set at the current revision", "v3", PublishOptions{IfRevision: ptr.To[uint64](2)}, action.Configured, 3, 3},
	}
	for _, st := range steps {
		res, err := publish(ctx, s, "media.resizer", []byte(st.value), st.opts)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if res.Action != st.want || res.Revision != st.wantRev {
			t.Errorf("%s: got %s at %d, want %s at %d", st.name, res.Action, res.Revision, st.want, st.wantRev)
		}
		e, err := s.Get(ctx, "media.resizer")
		if st.wantKeep == 0 {
			if !errors.Is(err, bus.ErrNotFound) {
				t.Errorf("%s: key exists (%v), want none", st.name, err)
			}
			continue
		}
		if err != nil || e.Revision != st.wantKeep {
			t.Errorf("%s: key at %d (%v), want %d", st.name, e.Revision, err, st.wantKeep)
		}
	}
}

func TestPublishCompareAndSetConflictsNameTheCurrentRevision(t *testing.T) {
	ctx, s := openStore(t)
	put(t, ctx, s, "media.resizer", "v1")
	put(t, ctx, s, "media.resizer", "v2")
	tests := []struct {
		name  string
		value string
		at    uint64
		dry   bool
		want  string
	}{
		{"stale revision", "v3", 1, false, "component media.resizer: expected revision 1, but the current revision is 2"},
		{"stale revision in a dry run", "v3", 1, true, "component media.resizer: expected revision 1, but the current revision is 2"},
		{"unchanged value at another revision", "v2", 1, false, "component media.resizer: expected revision 1, but the current revision is 2"},
		{"create-only on an existing key", "v3", 0, false, "component media.resizer: expected it not to exist, but the current revision is 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := publish(ctx, s, "media.resizer", []byte(tt.value), PublishOptions{IfRevision: &tt.at, DryRun: tt.dry})
			var conflict *ConflictError
			if !errors.As(err, &conflict) || !errors.Is(err, bus.ErrRevisionMismatch) || err.Error() != tt.want {
				t.Fatalf("err = %v, want a ConflictError %q", err, tt.want)
			}
			if e, _ := s.Get(ctx, "media.resizer"); e.Revision != 2 {
				t.Errorf("key moved to revision %d, want it left at 2", e.Revision)
			}
		})
	}
}
