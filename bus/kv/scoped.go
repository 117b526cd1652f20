package kv

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

	"github.com/tinyctl/tinyctl/bus"
)

// A scoped bucket is one the connection's account does not hold but
// imports part of (Config.APIPrefix): a namespace publisher's account sees
// only the writes of its namespace's keys, the last value of each of them,
// and ordered consumers filtered to them. nats.go's KV needs the bucket's
// stream info, which such an account may not read (it would list every
// key), so a scoped bucket reads with those primitives itself: a direct
// get for a key's latest revision, an ordered pull consumer for history
// and listings. Writes are publishes to $KV subjects with the headers
// nats.go's KV writes.

// ErrScoped is returned for what a scoped bucket cannot do: read outside
// its scope, watch, or report its settings.
var ErrScoped = errors.New("not available to credentials scoped to one namespace")

// scoped is how a Bucket reaches an imported bucket.
type scoped struct {
	js     jetstream.JetStream // at the import's prefix
	prefix string
	scope  string
}

// openScoped binds to an imported bucket without reading it.
func openScoped(c *bus.Conn, cfg Config) (*Bucket, error) {
	js, err := jetstream.NewWithAPIPrefix(c.NATS(), cfg.APIPrefix)
	if err != nil {
		return nil, fmt.Errorf("bus: bucket %s at %s: %w", cfg.Bucket, cfg.APIPrefix, err)
	}
	return &Bucket{c: c, name: cfg.Bucket, cfg: Config{Bucket: cfg.Bucket},
		scoped: &scoped{js: js, prefix: cfg.APIPrefix, scope: cfg.Scope}}, nil
}

// inScope fails for a key or filter outside the bucket's scope.
func (b *Bucket) inScope(key string) error {
	if b.scoped == nil || strings.HasPrefix(key, b.scoped.scope) {
		return nil
	}
	return fmt.Errorf("bus: key %s of bucket %s: %w (keys %s*)", key, b.name, ErrScoped, b.scoped.scope)
}

// scopedLatest is Latest through the imported direct get by subject.
func (b *Bucket) scopedLatest(ctx context.Context, key string) (Entry, error) {
	if err := b.inScope(key); err != nil {
		return Entry{}, err
	}
	subject := b.scoped.prefix + ".DIRECT.GET.KV_" + b.name + "." + b.subject(key)
	var m *nats.Msg
	err := b.c.Guarded(ctx, []string{subject}, func(ctx context.Context) (err error) {
		m, err = b.c.NATS().RequestWithContext(ctx, subject, nil)
		return err
	})
	if err != nil {
		return Entry{}, bus.Classify("get "+key, err)
	}
	if status := m.Header.Get("Status"); status == "404" {
		return Entry{}, bus.Classify("get "+key, jetstream.ErrKeyNotFound)
	} else if status != "" {
		return Entry{}, bus.Classify("get "+key, fmt.Errorf("direct get: status %s %s", status, m.Header.Get("Description")))
	}
	rev, _ := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
	created, _ := time.Parse(time.RFC3339Nano, m.Header.Get(jetstream.TimeStampHeaer))
	return Entry{Key: key, Value: m.Data, Revision: rev, Created: created, Op: opFromHeader(m.Header)}, nil
}

// scopedRead fetches every message an ordered consumer filtered to
// filter delivers from the start (all revisions, or only the last per key
// with lastPerKey), until none is pending.
func (b *Bucket) scopedRead(ctx context.Context, filter string, lastPerKey bool) ([]Entry, error) {
	if err := b.inScope(filter); err != nil {
		return nil, err
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{b.subject(filter)}, DeliverPolicy: jetstream.DeliverAllPolicy}
	if lastPerKey {
		cfg.DeliverPolicy = jetstream.DeliverLastPerSubjectPolicy
	}
	var out []Entry
	err := b.c.Guarded(ctx, []string{b.scoped.prefix + ".>"}, func(ctx context.Context) error {
		cons, err := b.scoped.js.OrderedConsumer(ctx, "KV_"+b.name, cfg)
		if err != nil {
			return err
		}
		for {
			batch, err := cons.FetchNoWait(256)
			if err != nil {
				return err
			}
			n := 0
			for m := range batch.Messages() {
				n++
				md, err := m.Metadata()
				if err != nil {
					return err
				}
				out = append(out, Entry{Key: strings.TrimPrefix(m.Subject(), "$KV."+b.name+"."), Value: m.Data(),
					Revision: md.Sequence.Stream, Created: md.Timestamp, Op: opFromHeader(m.Headers())})
				if md.NumPending == 0 {
					return batch.Error()
				}
			}
			if err := batch.Error(); err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
		}
	})
	return out, bus.Classify("read "+b.name, err)
}

// scopedHistory is History through an ordered consumer.
func (b *Bucket) scopedHistory(ctx context.Context, key string) ([]Entry, error) {
	h, err := b.scopedRead(ctx, key, false)
	if err == nil && len(h) == 0 {
		err = bus.Classify("history "+key, jetstream.ErrKeyNotFound)
	}
	return h, err
}

// scopedList is List through an ordered consumer per filter: the last
// revision of each key that is not deleted, sorted by key.
func (b *Bucket) scopedList(ctx context.Context, filters []string) ([]Entry, error) {
	if len(filters) == 0 || slices.Equal(filters, []string{">"}) {
		filters = []string{b.scoped.scope + ">"} // everything the scope shows
	}
	var out []Entry
	for _, f := range filters {
		es, err := b.scopedRead(ctx, f, true)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if e.Op == OpPut {
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, func(x, y Entry) int { return strings.Compare(x.Key, y.Key) })
	return slices.CompactFunc(out, func(x, y Entry) bool { return x.Key == y.Key }), nil
}

// scopedGetRevision is GetRevision from the key's history.
func (b *Bucket) scopedGetRevision(ctx context.Context, key string, rev uint64) (Entry, error) {
	h, err := b.scopedHistory(ctx, key)
	if err != nil {
		return Entry{}, err
	}
	for _, e := range h {
		if e.Revision == rev && e.Op == OpPut {
			return e, nil
		}
	}
	return Entry{}, bus.Classify("get "+key+" revision", jetstream.ErrKeyNotFound)
}

// scopedWrite publishes a KV write: op's header, and the expected last
// revision of the key when expect is set (0: the key has none); purge
// also rolls the key's earlier revisions up.
func (b *Bucket) scopedWrite(ctx context.Context, key string, value []byte, op Op, expect *uint64) (uint64, error) {
	if err := b.inScope(key); err != nil {
		return 0, err
	}
	msg := nats.NewMsg(b.subject(key))
	msg.Data = value
	switch op {
	case OpDelete:
		msg.Header.Set(kvOperationHeader, "DEL")
	case OpPurge:
		msg.Header.Set(kvOperationHeader, "PURGE")
		msg.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	}
	var expected uint64
	if expect != nil {
		expected = *expect
		msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(expected, 10))
	}
	return b.kvWrite(ctx, op.String(), key, expected, func(ctx context.Context) (uint64, error) {
		ack, err := b.scoped.js.PublishMsg(ctx, msg)
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	})
}

// scopedRemove writes a delete or purge marker, only over revision
// expected when it is not 0.
func (b *Bucket) scopedRemove(ctx context.Context, key string, op Op, expected uint64) error {
	var expect *uint64
	if expected > 0 {
		expect = &expected
	}
	_, err := b.scopedWrite(ctx, key, nil, op, expect)
	return err
}

// scopedCreate stores value only if the key is absent: never written, or
// its latest revision a delete or purge marker (as nats.go's KV Create).
func (b *Bucket) scopedCreate(ctx context.Context, key string, value []byte) (uint64, error) {
	none := uint64(0)
	rev, err := b.scopedWrite(ctx, key, value, OpPut, &none)
	var mismatch *bus.RevisionMismatchError
	if !errors.As(err, &mismatch) {
		return rev, err
	}
	last, lerr := b.scopedLatest(ctx, key)
	if lerr != nil || last.Op == OpPut {
		return rev, err
	}
	return b.scopedWrite(ctx, key, value, OpPut, &last.Revision)
}
