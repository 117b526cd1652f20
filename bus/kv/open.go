package kv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
)

// ErrBucketConfig is what every *BucketConfigError is.
var ErrBucketConfig = errors.New("bucket exists with other settings")

// BucketConfigError reports a KV bucket that exists with settings other
// than the configured ones. The bucket is left as it is.
type BucketConfigError struct {
	Bucket string
	Diffs  []bus.ConfigDiff
}

// Error names the bucket and every differing setting, and says how to
// settle each: change the bucket in place where JetStream allows it, or
// configure tinyctl with what the bucket has.
func (e *BucketConfigError) Error() string {
	fixes := make([]string, 0, len(e.Diffs))
	for _, d := range e.Diffs {
		if f := e.fix(d); !slices.Contains(fixes, f) {
			fixes = append(fixes, f)
		}
	}
	return fmt.Sprintf("bus: bucket %s exists with other settings: %s (%s; or configure tinyctl with the bucket's settings)",
		e.Bucket, bus.JoinDiffs(e.Diffs), strings.Join(fixes, "; "))
}

// fix says how to give the bucket the wanted value of d.
func (e *BucketConfigError) fix(d bus.ConfigDiff) string {
	stream := "KV_" + e.Bucket
	switch d.Field {
	case "replicas":
		return fmt.Sprintf("to change it in place, which keeps its keys: nats stream edit %s --replicas %s, on a JetStream cluster of at least %s servers", stream, d.Want, d.Want)
	case "history":
		return fmt.Sprintf("to change it in place: nats stream edit %s --max-msgs-per-subject %s", stream, d.Want)
	default:
		return fmt.Sprintf("%s cannot change in place: copy the keys out, delete the bucket and let tinyctl create it", d.Field)
	}
}

// Is makes the error match ErrBucketConfig.
func (e *BucketConfigError) Is(target error) bool { return target == ErrBucketConfig }

// Config are the settings of a bucket. Zero History and Replicas mean 1;
// zero Storage means file storage.
type Config struct {
	Bucket   string
	History  uint8
	Replicas int
	Storage  jetstream.StorageType
	// LimitMarkerTTL enables per-message TTLs and keeps the marker the
	// server writes when one expires for this long (0: TTLs disabled).
	LimitMarkerTTL time.Duration
	// MirrorDomain makes the bucket a read-only mirror of the bucket of
	// the same name in that JetStream domain (a fleet hub's): the mirror
	// keeps the origin's revisions, and writes through it go to the
	// origin. Empty: an ordinary bucket.
	MirrorDomain string
	// APIPrefix, when set, is where this connection's account sees the
	// bucket's JetStream API, imported from the account that holds it (a
	// namespace publisher's account: identity.SpecsAPIPrefix). Open then
	// binds without reading the bucket (see scoped.go), whatever the Mode.
	APIPrefix string
	// Scope, with APIPrefix, is the key prefix every read and write is
	// limited to ("media." for namespace media).
	Scope string
}

func (c Config) jetstream() jetstream.KeyValueConfig {
	kc := jetstream.KeyValueConfig{
		Bucket: c.Bucket, History: cmp.Or(c.History, 1), Replicas: cmp.Or(c.Replicas, 1),
		Storage: c.Storage, LimitMarkerTTL: c.LimitMarkerTTL,
	}
	if c.MirrorDomain != "" {
		kc.Mirror = &jetstream.StreamSource{Name: c.Bucket, Domain: c.MirrorDomain}
	}
	return kc
}

// mirrorDomain is the JetStream domain m mirrors from ("" for none, or
// for a mirror within this domain).
func mirrorDomain(m *jetstream.StreamSource) string {
	if m == nil || m.External == nil {
		return ""
	}
	d := strings.TrimSuffix(strings.TrimPrefix(m.External.APIPrefix, "$JS."), ".API")
	if d == m.External.APIPrefix {
		return m.External.APIPrefix
	}
	return d
}

// Mode says how Open treats a bucket that exists or does not.
type Mode int

// Modes of Open.
const (
	// Ensure creates a missing bucket with the Config and refuses one that
	// exists with other settings (*BucketConfigError): a controller must
	// not run on a bucket it does not understand.
	Ensure Mode = iota
	// Adopt creates a missing bucket with the Config and uses an existing
	// one with whatever settings it has (a publisher writing to a bucket
	// someone else made).
	Adopt
	// Existing uses an existing bucket as it is and returns ErrNotFound
	// for a missing one: reading never creates a bucket.
	Existing
)

// Bucket is an open KV bucket: the jetstream.KeyValue API with every call
// guarded against permission violations and its errors classified, plus
// what the stores need beyond it (raw latest reads that see markers,
// revision-checked writes with a per-message TTL). It is safe for
// concurrent use.
type Bucket struct {
	c      *bus.Conn
	name   string
	cfg    Config
	kv     jetstream.KeyValue
	stream jetstream.Stream
	// scoped is set for a bucket imported in part (Config.APIPrefix);
	// kv and stream are then nil.
	scoped *scoped
}

// Open binds to the bucket cfg names, as mode says. Permission and
// connection failures are classified as the bus package does.
func Open(ctx context.Context, c *bus.Conn, cfg Config, mode Mode) (*Bucket, error) {
	if cfg.APIPrefix != "" {
		return openScoped(c, cfg)
	}
	b := &Bucket{c: c, name: cfg.Bucket}
	err := c.Guarded(ctx, b.apiPatterns(), func(ctx context.Context) error {
		for attempt := 1; ; attempt++ {
			actx, cancel := context.WithTimeout(ctx, openAttemptTimeout)
			err := b.open(actx, cfg, mode)
			cancel()
			if lost := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil; lost {
				continue // an answer lost in a leader change: ask again
			}
			if mode == Existing || !errors.Is(err, jetstream.ErrStreamNotFound) || attempt == notYetVisibleTries {
				return err
			}
			select {
			case <-ctx.Done():
				return err
			case <-time.After(notYetVisibleWait):
			}
		}
	})
	var cfgErr *BucketConfigError
	if errors.As(err, &cfgErr) {
		return nil, err
	}
	if err != nil {
		return nil, bus.Classify("open bucket "+cfg.Bucket, err)
	}
	return b, nil
}

// A bucket that a server of a JetStream cluster has just created (this
// process, or another that won the creation race) is not always visible
// at once to a request another server answers: "stream not found" then is
// tried again, notYetVisibleTries times notYetVisibleWait apart, when
// Open may create the bucket. (Two controllers starting together on a
// fresh 3-node cluster: one exited on it.)
const (
	notYetVisibleTries = 20
	notYetVisibleWait  = 250 * time.Millisecond
)

// openAttemptTimeout bounds one attempt of Open's requests. A JetStream
// API request that reaches a cluster while its meta leader changes may
// get no answer at all: without a bound of its own it waited for the
// caller's whole deadline (a minute in a test on a fresh 3-node cluster,
// whose leader was elected 50 ms after the request).
var openAttemptTimeout = 10 * time.Second

// open binds to the bucket and reads its settings and stream.
func (b *Bucket) open(ctx context.Context, cfg Config, mode Mode) error {
	kv, err := b.bind(ctx, cfg, mode)
	if err != nil {
		return err
	}
	b.kv = kv
	if b.cfg, err = liveConfig(ctx, kv); err != nil {
		return err
	}
	if mode == Ensure {
		if err := check(cfg, b.cfg); err != nil {
			return err
		}
	}
	b.stream, err = b.c.JetStream().Stream(ctx, "KV_"+cfg.Bucket)
	return err
}

// bind finds the bucket, creating it when mode allows.
func (b *Bucket) bind(ctx context.Context, cfg Config, mode Mode) (jetstream.KeyValue, error) {
	js := b.c.JetStream()
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if !errors.Is(err, jetstream.ErrBucketNotFound) || mode == Existing {
		return kv, err
	}
	kc := cfg.jetstream()
	if cfg.MirrorDomain != "" {
		kc.Metadata = originMetadata(ctx, b.c, cfg)
	}
	kv, err = js.CreateKeyValue(ctx, kc)
	if errors.Is(err, jetstream.ErrBucketExists) { // lost a creation race
		kv, err = js.KeyValue(ctx, cfg.Bucket)
	}
	return kv, err
}

// liveConfig reads the settings the bucket has.
func liveConfig(ctx context.Context, kv jetstream.KeyValue) (Config, error) {
	st, err := kv.Status(ctx)
	if err != nil {
		return Config{}, err
	}
	h := st.Config()
	return Config{Bucket: h.Bucket, History: h.History, Replicas: h.Replicas, Storage: h.Storage,
		LimitMarkerTTL: h.LimitMarkerTTL, MirrorDomain: mirrorDomain(h.Mirror)}, nil
}

// check compares the live settings with the ones asked for.
func check(want, have Config) error {
	var diffs []bus.ConfigDiff
	add := func(field string, w, h any) {
		if fmt.Sprint(w) != fmt.Sprint(h) {
			diffs = append(diffs, bus.ConfigDiff{Field: field, Want: fmt.Sprint(w), Have: fmt.Sprint(h)})
		}
	}
	w := want.jetstream()
	add("history", w.History, max(have.History, 1))
	add("replicas", w.Replicas, max(have.Replicas, 1))
	add("storage", w.Storage, have.Storage)
	add("limitMarkerTTL", w.LimitMarkerTTL, have.LimitMarkerTTL)
	add("mirror of domain", want.MirrorDomain, have.MirrorDomain)
	if diffs != nil {
		return &BucketConfigError{Bucket: want.Bucket, Diffs: diffs}
	}
	return nil
}

// Name returns the bucket's name.
func (b *Bucket) Name() string { return b.name }

// Config returns the bucket's settings as the server holds them.
func (b *Bucket) Config() Config { return b.cfg }

func (b *Bucket) subject(key string) string { return Subject(b.name, key) }

// Subject is the subject JetStream stores key of bucket under (key may be
// a pattern: "*", ">").
func Subject(bucket, key string) string { return "$KV." + bucket + "." + key }

// apiPatterns match the JetStream API subjects that operations on the
// bucket publish to (info, direct get, consumer create).
func (b *Bucket) apiPatterns() []string {
	s := "KV_" + b.name
	return []string{"$JS.API.*.*." + s, "$JS.API.*.*." + s + ".>"}
}

// writePatterns match the subjects a write to key publishes to.
func (b *Bucket) writePatterns(key string) []string { return []string{b.subject(key)} }
