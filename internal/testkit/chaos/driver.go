package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
)

// writeTimeout bounds one put or delete; past it the write's outcome is
// unknown (it may still land).
const writeTimeout = 2 * time.Second

// Driver writes random puts and deletes over a fixed set of keys in one
// namespace and remembers, per key, what the bucket acknowledged. Every
// put has content of its own (an env var counts the puts), so every
// revision renders differently. It is safe for concurrent use.
type Driver struct {
	ns    string
	names []string
	// Scaled reports whether the component called name gets a scaling
	// block (a ScaledObject); nil: none does.
	Scaled func(name string) bool
	// Placement, when set, gives the component called name its placement.
	Placement func(name string) *api.Placement
	// Invalid, when set, says which puts (by their sequence number) write
	// a spec that does not validate (no image): the controller must
	// report it Stalled and keep what it applied before.
	Invalid func(seq int) bool

	mu     sync.Mutex
	store  *specs.Store
	rng    *rand.Rand
	seq    int
	ledger map[string]*entryLog
	counts Counts
	paused bool
	// adopted is set once the driver writes to a bucket it did not fill
	// from the start (SetStore): its ledger misses the markers the bucket
	// came with, which the bucket's history then answers for.
	adopted bool
}

// Counts are what a Driver has written.
type Counts struct {
	Puts, Deletes int // acknowledged
	Unacked       int // failed or timed out: outcome unknown
}

// entryLog is what the bucket acknowledged for one key.
type entryLog struct {
	last      Want     // the last acknowledged write
	acked     bool     // last is set
	uncertain bool     // a write after last was not acknowledged
	markers   []uint64 // acknowledged delete markers, ascending
	unsure    bool     // some delete was not acknowledged (its marker may exist)
	deleting  int      // deletes sent and not yet recorded (their markers may exist)
}

// Want is a key's state in the bucket: its latest revision and whether
// that is a delete marker. Exists is false for a key with no revision.
// Seq is the content of a value: the CHAOS_SEQ its spec sets (every put
// has its own), which the Deployment must carry; Invalid marks a value
// that does not validate (see Driver.Invalid).
type Want struct {
	Revision uint64
	Deleted  bool
	Exists   bool
	Seq      string
	Invalid  bool
}

// Live reports whether the key holds a value.
func (w Want) Live() bool { return w.Exists && !w.Deleted }

// NewDriver writes into store keys "<ns>.c00" … for n names, choosing with
// a generator seeded by seed.
func NewDriver(store *specs.Store, ns string, n int, seed uint64) *Driver {
	d := &Driver{ns: ns, store: store, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), ledger: map[string]*entryLog{}}
	for i := range n {
		d.names = append(d.names, fmt.Sprintf("c%02d", i))
	}
	return d
}

// Names returns the component names the driver writes.
func (d *Driver) Names() []string { return slices.Clone(d.names) }

// Key returns the bucket key of name.
func (d *Driver) Key(name string) string { return api.Key(d.ns, name) }

// Counts returns what was written so far.
func (d *Driver) Counts() Counts {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.counts
}

// SetStore makes later writes go to store (a recreated bucket) and forgets
// the ledger: revisions start again in a new bucket.
func (d *Driver) SetStore(store *specs.Store) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.store = store
	d.ledger = map[string]*entryLog{}
	d.adopted = true
}

// Component returns the spec the next put of name publishes.
func (d *Driver) component(name string, seq int) []byte {
	c := api.Component{APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: name, Namespace: d.ns},
		Spec: api.Spec{Image: "registry.example.com/chaos/worker:1.0",
			Jobs: api.Jobs{Subjects: []string{d.ns + "." + name}},
			Env:  []api.EnvVar{{Name: "CHAOS_SEQ", Value: strconv.Itoa(seq)}}}}
	if d.Scaled != nil && d.Scaled(name) {
		c.Spec.Scaling = &api.Scaling{MinReplicas: 0, MaxReplicas: 3}
	}
	if d.Placement != nil {
		c.Spec.Placement = d.Placement(name)
	}
	if d.Invalid != nil && d.Invalid(seq) {
		c.Spec.Image = ""
	}
	b, err := api.Canonical(c)
	if err != nil {
		panic(fmt.Sprintf("chaos: canonical component: %v", err)) // a fixed, valid shape
	}
	return b
}

// PutAll puts every key once, in order.
func (d *Driver) PutAll(ctx context.Context) {
	for _, n := range d.names {
		d.Put(ctx, n)
	}
}

// Step makes one random write: a put, or (a quarter of the time, to a key
// that holds a value) a delete.
func (d *Driver) Step(ctx context.Context) {
	d.mu.Lock()
	if d.paused {
		d.mu.Unlock()
		return
	}
	name := d.names[d.rng.IntN(len(d.names))]
	del := d.rng.IntN(4) == 0
	l := d.ledger[d.Key(name)]
	d.mu.Unlock()
	if del && l != nil && l.last.Live() {
		d.Delete(ctx, name)
		return
	}
	d.Put(ctx, name)
}

// Pause makes Step do nothing until Pause(false).
func (d *Driver) Pause(paused bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.paused = paused
}

// Run calls Step every interval until ctx ends.
func (d *Driver) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.Step(ctx)
		}
	}
}

// Put publishes a new revision of name and records the outcome.
func (d *Driver) Put(ctx context.Context, name string) {
	d.mu.Lock()
	d.seq++
	value, store := d.component(name, d.seq), d.store
	d.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	rev, err := store.Put(wctx, d.Key(name), value)
	d.record(d.Key(name), Want{Revision: rev, Exists: true}, err)
}

// Delete writes a delete marker for name and records the outcome.
func (d *Driver) Delete(ctx context.Context, name string) {
	key := d.Key(name)
	d.mu.Lock()
	store := d.store
	// The controller may act on the marker before its acknowledgement is
	// recorded: until then MarkerAfter reads the bucket's history.
	d.entry(key).deleting++
	d.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	rev, err := store.Write(wctx, key, nil, kv.OpDelete, nil, 0)
	d.record(key, Want{Revision: rev, Deleted: true, Exists: true}, err)
}

// entry returns key's ledger entry, made when missing; d.mu must be held.
func (d *Driver) entry(key string) *entryLog {
	l := d.ledger[key]
	if l == nil {
		l = &entryLog{}
		d.ledger[key] = l
	}
	return l
}

func (d *Driver) record(key string, w Want, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.entry(key)
	if w.Deleted {
		l.deleting--
	}
	switch {
	case err != nil:
		d.counts.Unacked++
		l.uncertain = true
		l.unsure = l.unsure || w.Deleted
		return
	case w.Deleted:
		d.counts.Deletes++
		l.markers = append(l.markers, w.Revision)
	default:
		d.counts.Puts++
	}
	l.last, l.acked, l.uncertain = w, true, false
}

// MarkerAfter returns the lowest delete marker of key above rev: an
// acknowledged one, or, when a delete of key went unanswered or is not yet
// answered (its marker may exist all the same) or the bucket came with markers the driver did
// not write (SetStore), one the bucket's history holds. ok is false
// when there is none; unsure is true only when the history no longer
// reaches back to rev, so that it cannot tell.
func (d *Driver) MarkerAfter(key string, rev uint64) (marker uint64, ok, unsure bool) {
	d.mu.Lock()
	l, store := d.ledger[key], d.store
	maybe := d.adopted
	if l != nil {
		for _, m := range l.markers {
			if m > rev {
				d.mu.Unlock()
				return m, true, false
			}
		}
		maybe = maybe || l.unsure || l.deleting > 0
	}
	d.mu.Unlock()
	if !maybe {
		return 0, false, false
	}
	// Polled for a while: the delete that went unanswered may be read
	// back only a moment after the controller acted on it.
	deadline := time.Now().Add(2 * writeTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		hist, err := store.History(ctx, key)
		cancel()
		if err != nil || len(hist) == 0 {
			return 0, false, true
		}
		for _, e := range hist {
			if e.Revision > rev && e.Op != kv.OpPut {
				return e.Revision, true, false
			}
		}
		if time.Now().After(deadline) {
			return 0, false, hist[0].Revision > rev
		}
		<-time.After(100 * time.Millisecond) // poll interval
	}
}

// validImage reports whether a spec's value names an image.
func validImage(value []byte) bool {
	var c api.Component
	return json.Unmarshal(value, &c) == nil && c.Spec.Image != ""
}

// SeqOf returns the CHAOS_SEQ a spec's value sets ("" when none).
func SeqOf(value []byte) string {
	var c api.Component
	if json.Unmarshal(value, &c) != nil {
		return ""
	}
	for _, e := range c.Spec.Env {
		if e.Name == "CHAOS_SEQ" {
			return e.Value
		}
	}
	return ""
}

// Truth reads every key's latest revision from the bucket and checks it
// against the ledger: an acknowledged write must be there or be followed
// by a later write the driver made without an answer. It returns the
// bucket's state per key and the keys whose acknowledged write was lost.
func (d *Driver) Truth(ctx context.Context) (map[string]Want, []string, error) {
	d.mu.Lock()
	store := d.store
	d.mu.Unlock()
	out := map[string]Want{}
	var lost []string
	for _, n := range d.names {
		key := d.Key(n)
		e, err := store.Latest(ctx, key)
		var w Want
		switch {
		case errors.Is(err, bus.ErrNotFound):
			w = d.compacted(key)
		case err != nil:
			return nil, nil, fmt.Errorf("read %s: %w", key, err)
		default:
			w = Want{Revision: e.Revision, Deleted: e.Op != kv.OpPut, Exists: true}
			if !w.Deleted {
				w.Seq, w.Invalid = SeqOf(e.Value), !validImage(e.Value)
			}
		}
		out[key] = w
		if problem := d.compare(key, w); problem != "" {
			lost = append(lost, problem)
		}
	}
	return out, lost, nil
}

// compacted is the state of a key the bucket holds nothing of: deleted,
// when the last write the driver made of it was an acknowledged delete
// (its marker was purged since: nats kv compact), else absent.
func (d *Driver) compacted(key string) Want {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l := d.ledger[key]; l != nil && l.acked && !l.uncertain && l.last.Deleted {
		return l.last
	}
	return Want{}
}

// compare says what is wrong with the bucket holding w for key, or "".
func (d *Driver) compare(key string, w Want) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.ledger[key]
	switch {
	case l == nil || !l.acked:
		return ""
	case w.Revision == l.last.Revision && w.Deleted == l.last.Deleted:
		return ""
	case l.uncertain && w.Revision > l.last.Revision:
		return "" // an unanswered later write landed
	}
	return fmt.Sprintf("%s: acknowledged %+v, bucket has %+v", key, l.last, w)
}
