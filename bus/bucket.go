package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Op is what a KV revision did to its key.
type Op uint8

// KV operations.
const (
	OpPut Op = iota
	OpDelete
	OpPurge
)

// String returns "put", "delete" or "purge".
func (o Op) String() string {
	switch o {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpPurge:
		return "purge"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Entry is one revision of a KV key. Value is empty for delete and purge
// markers. Created is the server's time of the write.
type Entry struct {
	Key      string
	Value    []byte
	Revision uint64
	Created  time.Time
	Op       Op
}

// Headers the KV layer writes and the server adds to markers.
const (
	kvOperationHeader  = "KV-Operation"
	markerReasonHeader = "Nats-Marker-Reason"
)

// opFromHeader reads the operation of a stored KV message.
func opFromHeader(h nats.Header) Op {
	switch h.Get(kvOperationHeader) {
	case "DEL":
		return OpDelete
	case "PURGE":
		return OpPurge
	}
	switch h.Get(markerReasonHeader) {
	case "MaxAge", "Purge":
		return OpPurge
	case "Remove":
		return OpDelete
	}
	return OpPut
}

func entryFromKV(e jetstream.KeyValueEntry) Entry {
	op := OpPut
	switch e.Operation() {
	case jetstream.KeyValueDelete:
		op = OpDelete
	case jetstream.KeyValuePurge:
		op = OpPurge
	}
	return Entry{Key: e.Key(), Value: e.Value(), Revision: e.Revision(), Created: e.Created(), Op: op}
}

// BucketConfig are the settings of a KV bucket this package creates.
// Zero History and Replicas mean 1; zero Storage means file storage.
type BucketConfig struct {
	Bucket   string
	History  uint8
	Replicas int
	Storage  jetstream.StorageType
}

// bucket is an open KV bucket plus what the stores need beyond the
// jetstream.KeyValue API: raw latest reads that see markers, and
// revision-checked writes with a per-message TTL.
type bucket struct {
	c      *Conn
	name   string
	kv     jetstream.KeyValue
	stream jetstream.Stream
}

func (b *bucket) subject(key string) string { return "$KV." + b.name + "." + key }

// apiPatterns match the JetStream API subjects that operations on the
// bucket publish to (info, direct get, consumer create).
func (b *bucket) apiPatterns() []string {
	s := "KV_" + b.name
	return []string{"$JS.API.*.*." + s, "$JS.API.*.*." + s + ".>"}
}

// writePatterns match the subjects a write to key publishes to.
func (b *bucket) writePatterns(key string) []string { return []string{b.subject(key)} }

// openBucket binds to the bucket cfg names, creating it if it does not
// exist. A bucket that exists with other settings is reported as a
// *BucketConfigError and left unchanged.
func openBucket(ctx context.Context, c *Conn, cfg jetstream.KeyValueConfig) (*bucket, error) {
	b := &bucket{c: c, name: cfg.Bucket}
	op := "open bucket " + cfg.Bucket
	err := c.guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		kv, err := c.js.KeyValue(ctx, cfg.Bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			kv, err = c.js.CreateKeyValue(ctx, cfg)
			if errors.Is(err, jetstream.ErrBucketExists) { // lost a creation race
				kv, err = c.js.KeyValue(ctx, cfg.Bucket)
			}
		}
		if err != nil {
			return err
		}
		b.kv = kv
		if err := checkBucket(ctx, kv, cfg); err != nil {
			return err
		}
		b.stream, err = c.js.Stream(ctx, "KV_"+cfg.Bucket)
		return err
	})
	var cfgErr *BucketConfigError
	if errors.As(err, &cfgErr) {
		return nil, err
	}
	if err != nil {
		return nil, classify(op, err)
	}
	return b, nil
}

// checkBucket compares the live bucket with the settings asked for.
func checkBucket(ctx context.Context, kv jetstream.KeyValue, want jetstream.KeyValueConfig) error {
	st, err := kv.Status(ctx)
	if err != nil {
		return err
	}
	have := st.Config()
	var diffs []ConfigDiff
	add := func(field string, w, h any) {
		if fmt.Sprint(w) != fmt.Sprint(h) {
			diffs = append(diffs, ConfigDiff{Field: field, Want: fmt.Sprint(w), Have: fmt.Sprint(h)})
		}
	}
	add("history", max(want.History, 1), have.History)
	add("replicas", max(want.Replicas, 1), have.Replicas)
	add("storage", want.Storage, have.Storage)
	add("ttl", want.TTL, have.TTL)
	add("limitMarkerTTL", want.LimitMarkerTTL, have.LimitMarkerTTL)
	if diffs != nil {
		return &BucketConfigError{Bucket: want.Bucket, Diffs: diffs}
	}
	return nil
}

// latest returns the newest revision of key, markers included. It returns
// ErrNotFound when the key has no revision at all.
func (b *bucket) latest(ctx context.Context, key string) (Entry, error) {
	var e Entry
	err := b.c.guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		m, err := b.stream.GetLastMsgForSubject(ctx, b.subject(key))
		if err != nil {
			return err
		}
		e = Entry{Key: key, Value: m.Data, Revision: m.Sequence, Created: m.Time, Op: opFromHeader(m.Header)}
		return nil
	})
	return e, classify("get "+key, err)
}

// currentRevision is the revision a mismatch error reports: the latest
// revision of key, markers included, or 0 when it has none.
func (b *bucket) currentRevision(ctx context.Context, key string) uint64 {
	e, err := b.latest(ctx, key)
	if err != nil {
		return 0
	}
	return e.Revision
}

// write stores value (or a delete marker when op is OpDelete) as the
// next revision of key. With expect set, only if the key's latest revision
// is *expect (0: no revision at all), else *RevisionMismatchError. ttl > 0
// makes the server remove the revision after ttl (whole seconds).
func (b *bucket) write(ctx context.Context, key string, value []byte, op Op, expect *uint64, ttl time.Duration) (uint64, error) {
	msg := nats.NewMsg(b.subject(key))
	msg.Data = value
	if op == OpDelete {
		msg.Header.Set(kvOperationHeader, "DEL")
	}
	if expect != nil {
		msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(*expect, 10))
	}
	var opts []jetstream.PublishOpt
	if ttl > 0 {
		opts = append(opts, jetstream.WithMsgTTL(ttl))
	}
	var rev uint64
	err := b.c.guarded(ctx, b.writePatterns(key), func(ctx context.Context) error {
		ack, err := b.c.js.PublishMsg(ctx, msg, opts...)
		if err == nil {
			rev = ack.Sequence
		}
		return err
	})
	var expected uint64
	if expect != nil {
		expected = *expect
	}
	return rev, b.writeError(ctx, "write "+key, key, expected, err)
}

// writeError classifies a write error, turning a wrong-last-sequence
// answer into a *RevisionMismatchError carrying the current revision.
func (b *bucket) writeError(ctx context.Context, op, key string, expect uint64, err error) error {
	if err == nil {
		return nil
	}
	var apiErr *jetstream.APIError
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) ||
		(errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)) {
		return &RevisionMismatchError{Key: key, Expected: expect, Current: b.currentRevision(ctx, key)}
	}
	return classify(op, err)
}

// list returns the latest revision of every key that is not deleted,
// sorted by key.
func (b *bucket) list(ctx context.Context) ([]Entry, error) {
	var out []Entry
	err := b.c.guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		w, err := b.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
		if err != nil {
			return err
		}
		defer func() { _ = w.Stop() }()
		out, err = collectInitial(ctx, w)
		return err
	})
	if err != nil {
		return nil, classify("list "+b.name, err)
	}
	slices.SortFunc(out, func(x, y Entry) int { return strings.Compare(x.Key, y.Key) })
	return out, nil
}

// collectInitial reads a watcher's entries up to its initial-values marker.
func collectInitial(ctx context.Context, w jetstream.KeyWatcher) ([]Entry, error) {
	var out []Entry
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("watcher closed before its initial values")
			}
			if e == nil {
				return out, nil
			}
			out = append(out, entryFromKV(e))
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
