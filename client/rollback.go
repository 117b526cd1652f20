package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// ErrNoTarget means a rollback has no revision to restore: the history
// holds no earlier value, or not the one asked for.
var ErrNoTarget = errors.New("no revision to roll back to")

// rollbackStore is what rollback needs from the spec bucket;
// *specs.Store implements it.
type rollbackStore interface {
	History(ctx context.Context, key string) ([]kv.Entry, error)
	Rollback(ctx context.Context, key string, rev uint64) (uint64, error)
}

// RollbackResult says what Rollback restored.
type RollbackResult struct {
	Key string
	// Target is the revision whose value was restored.
	Target uint64
	// Revision is the new revision holding it, or the current one when
	// Unchanged.
	Revision uint64
	// Unchanged is true when the key already held the target's value, so
	// nothing was written.
	Unchanged bool
}

// target picks the revision of hist (oldest first, as History returns it)
// that a rollback restores. With to > 0 it is that revision, which must be
// a put. With to == 0 it is the most recent put before the latest one
// whose value differs from the latest value; when the latest revision is a
// delete or purge marker, it is the last put (the rollback undeletes). It
// returns an error wrapping ErrNoTarget when there is none.
func target(hist []kv.Entry, to uint64) (kv.Entry, error) {
	if len(hist) == 0 {
		return kv.Entry{}, fmt.Errorf("%w: the component has no history", ErrNoTarget)
	}
	if to > 0 {
		return exactRevision(hist, to)
	}
	latest := hist[len(hist)-1]
	for i := len(hist) - 2; i >= 0; i-- {
		e := hist[i]
		if e.Op == kv.OpPut && (latest.Op != kv.OpPut || !bytes.Equal(e.Value, latest.Value)) {
			return e, nil
		}
	}
	if latest.Op != kv.OpPut {
		return kv.Entry{}, fmt.Errorf("%w: no value was kept before revision %d deleted it", ErrNoTarget, latest.Revision)
	}
	return kv.Entry{}, fmt.Errorf("%w: no earlier revision holds a different value (kept revisions: %s)", ErrNoTarget, revisions(hist))
}

func exactRevision(hist []kv.Entry, to uint64) (kv.Entry, error) {
	for _, e := range hist {
		if e.Revision != to {
			continue
		}
		if e.Op != kv.OpPut {
			return kv.Entry{}, fmt.Errorf("%w: revision %d is a %s marker, not a value", ErrNoTarget, to, e.Op)
		}
		return e, nil
	}
	return kv.Entry{}, fmt.Errorf("%w: revision %d is not in the component's history (kept revisions: %s)", ErrNoTarget, to, revisions(hist))
}

func revisions(hist []kv.Entry) string {
	out := make([]string, len(hist))
	for i, e := range hist {
		out[i] = strconv.FormatUint(e.Revision, 10)
	}
	return strings.Join(out, ", ")
}

// rollback re-publishes the value of a revision of key (chosen by target
// from to) as a new revision, unless the key's latest revision already
// holds that value. A write racing with it makes it fail with a
// *ConflictError rather than overwrite. A key without history returns an
// error wrapping bus.ErrNotFound.
func rollback(ctx context.Context, s rollbackStore, key string, to uint64) (RollbackResult, error) {
	res := RollbackResult{Key: key}
	hist, err := s.History(ctx, key)
	if err != nil {
		return res, fmt.Errorf("read history of component %s: %w", key, err)
	}
	pick, err := target(hist, to)
	if err != nil {
		return res, fmt.Errorf("roll back component %s: %w", key, err)
	}
	res.Target = pick.Revision
	if latest := hist[len(hist)-1]; latest.Op == kv.OpPut && bytes.Equal(latest.Value, pick.Value) {
		res.Unchanged, res.Revision = true, latest.Revision
		return res, nil
	}
	res.Revision, err = s.Rollback(ctx, key, pick.Revision)
	var mismatch *bus.RevisionMismatchError
	if errors.As(err, &mismatch) {
		return res, &ConflictError{Key: key, Expected: mismatch.Expected, Current: mismatch.Current}
	}
	if err != nil {
		return res, fmt.Errorf("roll back component %s: %w", key, err)
	}
	return res, nil
}
