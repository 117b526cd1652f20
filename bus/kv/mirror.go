package kv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
)

// A bucket opened with Config.MirrorDomain copies the bucket of the same
// name at a fleet hub. nats-server's mirror resumes from its own last
// sequence and cannot tell that the hub's bucket was deleted and created
// again, restored from a backup, or had keys purged (delete markers
// compacted): it skips whatever the hub numbers at or below that sequence,
// and never sees a purge. What follows reads the hub's bucket and the
// mirror side by side, so the controller can tell, and rebuilds the mirror
// or removes a purged key from it.

// MetaOrigin is the stream metadata key under which a mirror records the
// incarnation of the hub bucket it was created from.
const MetaOrigin = "tinyctl.io/origin"

// ErrNotMirror is returned by the mirror operations on an ordinary bucket.
var ErrNotMirror = errors.New("bucket is not a mirror")

// Origin is the hub's bucket that a mirror copies, as the hub holds it.
type Origin struct {
	// Incarnation names the hub bucket's creation (its stream's creation
	// time): a bucket deleted and created again, or restored, has another.
	Incarnation string
	// FirstRevision and LastRevision are the stream's first and last
	// sequences (FirstRevision > LastRevision: it holds no message; a
	// purge of the newest messages leaves LastRevision); LastMessage is
	// the newest revision it holds (0: none), what a mirror can copy.
	FirstRevision, LastRevision, LastMessage uint64
	// Keys holds every key with at least one message (a value or a
	// marker) at the hub, when Origin was asked for them.
	Keys map[string]bool
}

// Mirror is the local side of a mirror.
type Mirror struct {
	// Origin is the hub incarnation recorded when the mirror was created
	// or rebuilt ("" when the hub could not be read then).
	Origin string
	// LastRevision is the newest hub revision copied.
	LastRevision uint64
	// Lag is how many hub messages the mirror had yet to copy at its last
	// contact with the hub; Active is how long ago that was (negative:
	// never since the server started).
	Lag    uint64
	Active time.Duration
}

// Incarnation names a stream's creation as Origin.Incarnation does.
func Incarnation(created time.Time) string { return created.UTC().Format(time.RFC3339Nano) }

// Origin reads the hub's bucket through its JetStream domain; with keys,
// also the set of keys it holds (one request per 100,000 keys).
func (b *Bucket) Origin(ctx context.Context, keys bool) (Origin, error) {
	if b.cfg.MirrorDomain == "" || b.scoped != nil {
		return Origin{}, fmt.Errorf("bus: bucket %s origin: %w", b.name, ErrNotMirror)
	}
	return readOrigin(ctx, b.c, b.name, b.cfg.MirrorDomain, keys)
}

// InDomain calls read with the stream of bucket in JetStream domain
// domain (a fleet hub's), bound through that domain's API: permission
// violations on it are guarded, and the stream's info is read once.
func InDomain(ctx context.Context, c *bus.Conn, bucket, domain string, read func(context.Context, jetstream.Stream) error) error {
	stream := "KV_" + bucket
	api := "$JS." + domain + ".API.*.*." + stream
	return c.Guarded(ctx, []string{api, api + ".>"}, func(ctx context.Context) error {
		js, err := jetstream.NewWithDomain(c.NATS(), domain)
		if err != nil {
			return err
		}
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		return read(ctx, s)
	})
}

func readOrigin(ctx context.Context, c *bus.Conn, bucket, domain string, keys bool) (Origin, error) {
	var o Origin
	err := InDomain(ctx, c, bucket, domain, func(ctx context.Context, s jetstream.Stream) (err error) {
		info := s.CachedInfo()
		if keys {
			if info, err = s.Info(ctx, jetstream.WithSubjectFilter("$KV."+bucket+".>")); err != nil {
				return err
			}
			o.Keys = make(map[string]bool, len(info.State.Subjects))
			for subj := range maps.Keys(info.State.Subjects) {
				o.Keys[strings.TrimPrefix(subj, "$KV."+bucket+".")] = true
			}
		}
		o.Incarnation = Incarnation(info.Created)
		o.FirstRevision, o.LastRevision = info.State.FirstSeq, info.State.LastSeq
		if info.State.Msgs == 0 {
			return nil
		}
		m, err := s.GetLastMsgForSubject(ctx, "$KV."+bucket+".>")
		if err != nil {
			return err
		}
		o.LastMessage = m.Sequence
		return nil
	})
	return o, bus.Classify("read the hub's bucket "+bucket+" (domain "+domain+")", err)
}

// Mirror reads the local side of a mirror.
func (b *Bucket) Mirror(ctx context.Context) (Mirror, error) {
	if b.cfg.MirrorDomain == "" || b.scoped != nil {
		return Mirror{}, fmt.Errorf("bus: bucket %s mirror: %w", b.name, ErrNotMirror)
	}
	var m Mirror
	err := b.c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		info, err := b.stream.Info(ctx)
		if err != nil {
			return err
		}
		m = Mirror{Origin: info.Config.Metadata[MetaOrigin], LastRevision: info.State.LastSeq, Active: -1}
		if info.Mirror != nil {
			m.Lag, m.Active = info.Mirror.Lag, info.Mirror.Active
		}
		return nil
	})
	return m, bus.Classify("bucket "+b.name+" mirror info", err)
}

// Rebuild deletes the local mirror and creates it again, recording origin:
// the new mirror copies the hub's bucket from its first message. Readers
// of the bucket see it empty until the copy arrives (WaitMirror).
func (b *Bucket) Rebuild(ctx context.Context, origin Origin) error {
	if b.cfg.MirrorDomain == "" || b.scoped != nil {
		return fmt.Errorf("bus: bucket %s rebuild: %w", b.name, ErrNotMirror)
	}
	err := b.c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		js := b.c.JetStream()
		if err := js.DeleteStream(ctx, "KV_"+b.name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		kc := b.cfg.jetstream()
		kc.Metadata = map[string]string{MetaOrigin: origin.Incarnation}
		// The bucket's handles name the stream; they keep working.
		_, err := js.CreateKeyValue(ctx, kc)
		return err
	})
	return bus.Classify("rebuild mirror "+b.name, err)
}

// originMetadata is the metadata a mirror is created with: the hub
// bucket's incarnation, when the hub answers within a few seconds (a
// cluster cut off from its hub still starts; its mirror then records
// nothing until rebuilt).
func originMetadata(ctx context.Context, c *bus.Conn, cfg Config) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	o, err := readOrigin(ctx, c, cfg.Bucket, cfg.MirrorDomain, false)
	if err != nil {
		return nil
	}
	return map[string]string{MetaOrigin: o.Incarnation}
}

// WaitMirror polls the mirror until it has copied the hub's revision rev.
func (b *Bucket) WaitMirror(ctx context.Context, rev uint64) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		m, err := b.Mirror(ctx)
		if err == nil && m.LastRevision >= rev {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bus: mirror %s: revision %d not copied yet (at %d): %w", b.name, rev, m.LastRevision, ctx.Err())
		case <-tick.C:
		}
	}
}

// PurgeLocal removes every message of key from the local mirror only (the
// hub purged it; a mirror never sees a purge).
func (b *Bucket) PurgeLocal(ctx context.Context, key string) error {
	if b.cfg.MirrorDomain == "" || b.scoped != nil {
		return fmt.Errorf("bus: bucket %s purge %s: %w", b.name, key, ErrNotMirror)
	}
	err := b.c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		return b.stream.Purge(ctx, jetstream.WithPurgeSubject(b.subject(key)))
	})
	return bus.Classify("purge "+key+" from mirror "+b.name, err)
}
