package kv

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
)

// Create stores value under key only if the key is absent (never written,
// deleted or purged). A present key returns a *bus.RevisionMismatchError
// that matches bus.ErrExists and carries the key's revision.
func (b *Bucket) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	if b.scoped != nil {
		return b.scopedCreate(ctx, key, value)
	}
	return b.kvWrite(ctx, "create", key, 0, func(ctx context.Context) (uint64, error) {
		return b.kv.Create(ctx, key, value)
	})
}

// Put stores value under key whatever its current revision.
func (b *Bucket) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	if b.scoped != nil {
		return b.scopedWrite(ctx, key, value, OpPut, nil)
	}
	return b.kvWrite(ctx, "put", key, 0, func(ctx context.Context) (uint64, error) {
		return b.kv.Put(ctx, key, value)
	})
}

// Update stores value under key only if the key's latest revision is
// expected. Of two writers racing with the same expected revision exactly
// one wins; the other gets a *bus.RevisionMismatchError with the current
// revision.
func (b *Bucket) Update(ctx context.Context, key string, value []byte, expected uint64) (uint64, error) {
	if b.scoped != nil {
		return b.scopedWrite(ctx, key, value, OpPut, &expected)
	}
	return b.kvWrite(ctx, "update", key, expected, func(ctx context.Context) (uint64, error) {
		return b.kv.Update(ctx, key, value, expected)
	})
}

// Delete writes a delete marker for key, keeping its history. With
// expected > 0 it deletes only if that is the latest revision.
func (b *Bucket) Delete(ctx context.Context, key string, expected uint64) error {
	if b.scoped != nil {
		return b.scopedRemove(ctx, key, OpDelete, expected)
	}
	return b.remove(ctx, "delete", key, expected, b.kv.Delete)
}

// Purge writes a purge marker for key and drops all its earlier
// revisions. With expected > 0 it purges only if that is the latest
// revision.
func (b *Bucket) Purge(ctx context.Context, key string, expected uint64) error {
	if b.scoped != nil {
		return b.scopedRemove(ctx, key, OpPurge, expected)
	}
	return b.remove(ctx, "purge", key, expected, b.kv.Purge)
}

func (b *Bucket) remove(ctx context.Context, op, key string, expected uint64,
	fn func(context.Context, string, ...jetstream.KVDeleteOpt) error) error {
	var opts []jetstream.KVDeleteOpt
	if expected > 0 {
		opts = append(opts, jetstream.LastRevision(expected))
	}
	_, err := b.kvWrite(ctx, op, key, expected, func(ctx context.Context) (uint64, error) {
		return 0, fn(ctx, key, opts...)
	})
	return err
}

func (b *Bucket) kvWrite(ctx context.Context, op, key string, expected uint64, fn func(context.Context) (uint64, error)) (uint64, error) {
	var rev uint64
	err := b.c.Guarded(ctx, b.writePatterns(key), func(ctx context.Context) (err error) {
		rev, err = fn(ctx)
		return err
	})
	return rev, b.writeError(ctx, op+" "+key, key, expected, err)
}

// Write stores value (or a delete marker when op is OpDelete) as the next
// revision of key. With expect set, only if the key's latest revision is
// *expect (0: no revision at all), else *bus.RevisionMismatchError. ttl >
// 0 makes the server remove the revision after ttl (whole seconds; the
// bucket needs a LimitMarkerTTL).
func (b *Bucket) Write(ctx context.Context, key string, value []byte, op Op, expect *uint64, ttl time.Duration) (uint64, error) {
	if b.scoped != nil && ttl == 0 {
		return b.scopedWrite(ctx, key, value, op, expect)
	}
	msg := nats.NewMsg(b.subject(key))
	msg.Data = value
	if op == OpDelete {
		msg.Header.Set(kvOperationHeader, "DEL")
	}
	var expected uint64
	if expect != nil {
		expected = *expect
		msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(expected, 10))
	}
	var opts []jetstream.PublishOpt
	if ttl > 0 {
		opts = append(opts, jetstream.WithMsgTTL(ttl))
	}
	return b.kvWrite(ctx, "write", key, expected, func(ctx context.Context) (uint64, error) {
		ack, err := b.c.JetStream().PublishMsg(ctx, msg, opts...)
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	})
}

// writeError classifies a write error, turning a wrong-last-sequence
// answer into a *bus.RevisionMismatchError carrying the current revision.
func (b *Bucket) writeError(ctx context.Context, op, key string, expect uint64, err error) error {
	if err == nil {
		return nil
	}
	var apiErr *jetstream.APIError
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) ||
		(errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)) {
		return &bus.RevisionMismatchError{Key: key, Expected: expect, Current: b.currentRevision(ctx, key)}
	}
	return bus.Classify(op, err)
}

// currentRevision is the revision a mismatch error reports: the latest
// revision of key, markers included, or 0 when it has none.
func (b *Bucket) currentRevision(ctx context.Context, key string) uint64 {
	e, err := b.Latest(ctx, key)
	if err != nil {
		return 0
	}
	return e.Revision
}
