package reconcile

import (
	"sync"

	"github.com/tinyctl/tinyctl/bus/kv"
)

// specEntry is the latest state of one key as the watch delivered it. For a
// delete or purge marker, prev holds the last value put before it (when the
// loop saw it), so deletion policy can be honoured without a read.
type specEntry struct {
	rev   uint64
	op    kv.Op
	value []byte
	prev  []byte
}

// specCache holds the latest entry of every key the watch delivered. It is
// the loop's only view of the bucket between reads; entries are never
// removed, so a key whose marker was seen stays known as deleted.
type specCache struct {
	mu      sync.RWMutex
	entries map[string]specEntry
	lastRev uint64
}

func newSpecCache() *specCache { return &specCache{entries: map[string]specEntry{}} }

// observe records e and reports whether it is newer than what was known.
func (c *specCache) observe(e kv.Entry) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.entries[e.Key]
	if ok && old.rev >= e.Revision {
		return false
	}
	next := specEntry{rev: e.Revision, op: e.Op, value: e.Value}
	if e.Op != kv.OpPut {
		next.prev = old.value
		if old.op != kv.OpPut {
			next.prev = old.prev
		}
	}
	c.entries[e.Key] = next
	if e.Revision > c.lastRev {
		c.lastRev = e.Revision
	}
	return true
}

// reset forgets every entry: the bucket was recreated, its revisions start
// again, and only what its new initial values hold is known. Children of
// forgotten keys become orphans; nothing is deleted.
func (c *specCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = map[string]specEntry{}
	c.lastRev = 0
}

// get returns the latest entry of key.
func (c *specCache) get(key string) (specEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.entries[key]
	return e, ok
}

// known reports whether the watch ever delivered key (a put or a marker).
func (c *specCache) known(key string) bool {
	_, ok := c.get(key)
	return ok
}

// keys returns every key whose latest entry is a put.
func (c *specCache) liveKeys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.entries))
	for k, e := range c.entries {
		if e.op == kv.OpPut {
			out = append(out, k)
		}
	}
	return out
}

// revision returns the highest revision delivered so far.
func (c *specCache) revision() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lastRev
}
