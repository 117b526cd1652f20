package kv

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
)

// Latest returns the newest revision of key, markers included. It returns
// bus.ErrNotFound when the key has no revision at all.
func (b *Bucket) Latest(ctx context.Context, key string) (Entry, error) {
	if b.scoped != nil {
		return b.scopedLatest(ctx, key)
	}
	var e Entry
	err := b.c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		m, err := b.stream.GetLastMsgForSubject(ctx, b.subject(key))
		if err != nil {
			return err
		}
		e = Entry{Key: key, Value: m.Data, Revision: m.Sequence, Created: m.Time, Op: opFromHeader(m.Header)}
		return nil
	})
	return e, bus.Classify("get "+key, err)
}

// Get returns the latest value of key. A key that was never written, or
// whose latest revision is a delete or purge marker, returns
// bus.ErrNotFound.
func (b *Bucket) Get(ctx context.Context, key string) (Entry, error) {
	e, err := b.Latest(ctx, key)
	if err == nil && e.Op != OpPut {
		return Entry{}, bus.Classify("get "+key, jetstream.ErrKeyDeleted)
	}
	return e, err
}

// GetRevision returns revision rev of key. A revision that does not
// exist, belongs to another key or is a marker returns bus.ErrNotFound.
func (b *Bucket) GetRevision(ctx context.Context, key string, rev uint64) (Entry, error) {
	if b.scoped != nil {
		return b.scopedGetRevision(ctx, key, rev)
	}
	var e Entry
	err := b.c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		kve, err := b.kv.GetRevision(ctx, key, rev)
		if err == nil {
			e = entryFromKV(kve)
		}
		return err
	})
	return e, bus.Classify("get "+key+" revision", err)
}

// History returns the kept revisions of key, oldest first, markers
// included. A key with no revisions returns bus.ErrNotFound.
func (b *Bucket) History(ctx context.Context, key string) ([]Entry, error) {
	if b.scoped != nil {
		return b.scopedHistory(ctx, key)
	}
	var out []Entry
	err := b.c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		h, err := b.kv.History(ctx, key)
		for _, e := range h {
			out = append(out, entryFromKV(e))
		}
		return err
	})
	return out, bus.Classify("history "+key, err)
}

// List returns the latest revision of every key matching filters (NATS
// wildcards; none means every key) that is not deleted, sorted by key. An
// empty bucket returns no entries and no error.
func (b *Bucket) List(ctx context.Context, filters ...string) ([]Entry, error) {
	if b.scoped != nil {
		return b.scopedList(ctx, filters)
	}
	return b.latest(ctx, filters)
}

// Keys returns the keys List would return entries of, sorted, without
// reading their values (through a scoped account, which has no
// headers-only watch here, it lists and drops the values).
func (b *Bucket) Keys(ctx context.Context, filters ...string) ([]string, error) {
	var entries []Entry
	var err error
	if b.scoped != nil {
		entries, err = b.scopedList(ctx, filters)
	} else {
		entries, err = b.latest(ctx, filters, jetstream.MetaOnly())
	}
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	return keys, nil
}

// latest is List through a watch of the bucket, with opts added.
func (b *Bucket) latest(ctx context.Context, filters []string, opts ...jetstream.WatchOpt) ([]Entry, error) {
	var out []Entry
	err := b.c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		if len(filters) == 0 {
			filters = []string{">"}
		}
		w, err := b.kv.WatchFiltered(ctx, slices.Clone(filters), append(opts, jetstream.IgnoreDeletes())...)
		if err != nil {
			return err
		}
		defer func() { _ = w.Stop() }()
		out, err = collectInitial(ctx, w)
		return err
	})
	if err != nil {
		return nil, bus.Classify("list "+b.name, err)
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

// Info identifies one incarnation of a bucket: a bucket deleted and
// created again under the same name has a new Created time, and its
// revisions start again from 1.
type Info struct {
	Created      time.Time
	LastRevision uint64
	// Now is the server's clock when it answered (zero from servers that
	// do not say): the clock the server stamps writes with.
	Now time.Time
}

// Info returns the bucket's creation time and latest revision (the
// sequence of its last write, whatever the key). An empty bucket has
// LastRevision 0.
func (b *Bucket) Info(ctx context.Context) (Info, error) {
	if b.scoped != nil {
		return Info{}, fmt.Errorf("bus: bucket %s info: %w", b.name, ErrScoped)
	}
	var info *jetstream.StreamInfo
	err := b.c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) (err error) {
		info, err = b.stream.Info(ctx)
		return err
	})
	if err != nil {
		return Info{}, bus.Classify("bucket "+b.name+" info", err)
	}
	return Info{Created: info.Created, LastRevision: info.State.LastSeq, Now: info.TimeStamp}, nil
}

// LatestFromLeader is Latest answered by the stream's leader. Latest is a
// direct get, which any replica answers, and a replica still catching up
// (a restarted node of a clustered bucket) answers with what it has: an
// older revision, or none. A check that a revision is still the newest
// (the controller's resurrection guard) must ask the leader. A bucket
// reached through an import (Config.APIPrefix) has only direct gets, and
// falls back to Latest.
func (b *Bucket) LatestFromLeader(ctx context.Context, key string) (Entry, error) {
	if b.scoped != nil {
		return b.scopedLatest(ctx, key)
	}
	e, err := b.leaderGet(ctx, key, map[string]any{"last_by_subj": b.subject(key)})
	return e, bus.Classify("get "+key, err)
}

// GetRevisionFromLeader is GetRevision answered by the stream's leader:
// a write just acknowledged is there even while the replica a direct
// get reaches has not applied it yet (a lease reading back the write
// that acquired it).
func (b *Bucket) GetRevisionFromLeader(ctx context.Context, key string, rev uint64) (Entry, error) {
	if b.scoped != nil {
		return b.scopedGetRevision(ctx, key, rev)
	}
	e, err := b.leaderGet(ctx, key, map[string]any{"seq": rev})
	if err == nil && e.Op != OpPut {
		err = jetstream.ErrKeyNotFound
	}
	return e, bus.Classify("get "+key+" revision", err)
}

// leaderGet asks the stream's leader for one message of key
// (STREAM.MSG.GET, not the direct get). A message of another key is
// jetstream.ErrKeyNotFound.
func (b *Bucket) leaderGet(ctx context.Context, key string, query map[string]any) (Entry, error) {
	var e Entry
	err := b.c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		req, _ := json.Marshal(query)
		opts := b.c.JetStream().Options()
		if _, ok := ctx.Deadline(); !ok {
			// As the JetStream client bounds its own requests: a leader
			// being elected may leave the request unanswered.
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, cmp.Or(opts.DefaultTimeout, 5*time.Second))
			defer cancel()
		}
		m, err := b.c.NATS().RequestWithContext(ctx, apiPrefix(opts)+"STREAM.MSG.GET.KV_"+b.name, req)
		if err != nil {
			return err
		}
		var resp struct {
			Message *struct {
				Subject string    `json:"subject"`
				Seq     uint64    `json:"seq"`
				Hdrs    []byte    `json:"hdrs"`
				Data    []byte    `json:"data"`
				Time    time.Time `json:"time"`
			} `json:"message"`
			Error *jetstream.APIError `json:"error"`
		}
		if err := json.Unmarshal(m.Data, &resp); err != nil {
			return fmt.Errorf("stream message get: %w", err)
		}
		switch {
		case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
			return jetstream.ErrKeyNotFound
		case resp.Error != nil:
			return resp.Error
		case resp.Message == nil:
			return errors.New("stream message get: no message in the answer")
		case resp.Message.Subject != b.subject(key):
			return jetstream.ErrKeyNotFound
		}
		hdr, err := nats.DecodeHeadersMsg(resp.Message.Hdrs)
		if err != nil && len(resp.Message.Hdrs) > 0 {
			return fmt.Errorf("stream message get: headers: %w", err)
		}
		e = Entry{Key: key, Value: resp.Message.Data, Revision: resp.Message.Seq, Created: resp.Message.Time, Op: opFromHeader(hdr)}
		return nil
	})
	return e, err
}

// apiPrefix is where a JetStream context sends its API requests:
// "$JS.API.", or a domain's or an import's.
func apiPrefix(o jetstream.JetStreamOptions) string {
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		return strings.TrimSuffix(o.APIPrefix, ".") + "."
	}
	return "$JS.API."
}
