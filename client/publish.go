package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// Store is what publishing needs from the spec bucket; *specs.Store
// implements it.
type store interface {
	Get(ctx context.Context, key string) (kv.Entry, error)
	Put(ctx context.Context, key string, value []byte) (uint64, error)
	Create(ctx context.Context, key string, value []byte) (uint64, error)
	Update(ctx context.Context, key string, value []byte, expected uint64) (uint64, error)
}

// PublishResult is the outcome of Publish for one key.
type PublishResult struct {
	Key    string
	Action action.Action
	// Revision is the key's revision after the call: the new one after a
	// write, the current one when unchanged or in a dry run (0 if absent).
	Revision uint64
}

// PublishOptions tune Publish.
type PublishOptions struct {
	// DryRun decides the action without writing.
	DryRun bool
	// Tenancy scopes the component's subjects (the zero value: only those
	// under its namespace's name; validate.Tenancy).
	Tenancy validate.Tenancy
	// IfRevision, when not nil, makes the write compare-and-set: it
	// succeeds only if the key's latest revision is *IfRevision (0: the key
	// must not exist).
	IfRevision *uint64
}

// ConflictError says a compare-and-set write lost: the key was at revision
// Current (0: absent), not Expected. Find it with errors.As.
type ConflictError struct {
	Key      string
	Expected uint64
	Current  uint64
}

func (e *ConflictError) Error() string {
	switch {
	case e.Expected == 0:
		return fmt.Sprintf("component %s: expected it not to exist, but the current revision is %d", e.Key, e.Current)
	case e.Current == 0:
		return fmt.Sprintf("component %s: expected revision %d, but it does not exist", e.Key, e.Expected)
	}
	return fmt.Sprintf("component %s: expected revision %d, but the current revision is %d", e.Key, e.Expected, e.Current)
}

// Unwrap returns the stores' own revision-mismatch error, which callers
// of the stores match.
func (e *ConflictError) Unwrap() error { return bus.ErrRevisionMismatch }

// publish stores value under key unless the key already holds exactly
// these bytes, in which case nothing is written. It returns what happened:
// action.Created when the key had no value (never written, or deleted),
// action.Configured when it held another one, action.Unchanged when it held this one.
// With opts.IfRevision a write happens only at that revision, else it
// returns a *ConflictError; an unchanged value at another revision is a
// conflict too. Bucket errors are returned wrapped.
func publish(ctx context.Context, s store, key string, value []byte, opts PublishOptions) (PublishResult, error) {
	res := PublishResult{Key: key, Action: action.Created}
	cur, err := s.Get(ctx, key)
	switch {
	case errors.Is(err, bus.ErrNotFound):
	case err != nil:
		return res, fmt.Errorf("read component %s: %w", key, err)
	case bytes.Equal(cur.Value, value) && (opts.IfRevision == nil || *opts.IfRevision == cur.Revision):
		res.Action, res.Revision = action.Unchanged, cur.Revision
		return res, nil
	default:
		res.Action, res.Revision = action.Configured, cur.Revision
	}
	if opts.DryRun {
		if opts.IfRevision != nil && res.Action == action.Configured && *opts.IfRevision != cur.Revision {
			return res, &ConflictError{Key: key, Expected: *opts.IfRevision, Current: cur.Revision}
		}
		return res, nil
	}
	res.Revision, err = write(ctx, s, key, value, opts.IfRevision)
	if err != nil {
		return res, err
	}
	return res, nil
}

// write stores value, checking the revision when ifRevision is set.
func write(ctx context.Context, s store, key string, value []byte, ifRevision *uint64) (uint64, error) {
	var (
		rev uint64
		err error
	)
	switch {
	case ifRevision == nil:
		rev, err = s.Put(ctx, key, value)
	case *ifRevision == 0:
		rev, err = s.Create(ctx, key, value)
	default:
		rev, err = s.Update(ctx, key, value, *ifRevision)
	}
	var mismatch *bus.RevisionMismatchError
	if errors.As(err, &mismatch) {
		return 0, &ConflictError{Key: key, Expected: mismatch.Expected, Current: mismatch.Current}
	}
	if err != nil {
		return 0, fmt.Errorf("publish component %s: %w", key, err)
	}
	return rev, nil
}
