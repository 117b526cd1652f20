package reconcile

import (
	"sync"

	"github.com/tinyctl/tinyctl/api"
)

// specEntry is the latest state of one key as the watch delivered it. A
// put keeps its value; a delete or purge marker keeps only what removing
// the component needs: whether the last value asked for its stream to be
// deleted (so deletion policy is honoured without a read, and a deleted
// key holds no memory beyond this).
type specEntry struct {
	rev          uint64
	deleted      bool
	value        []byte
	deleteStream bool
	// policyKnown is false when the marker came without the loop having
	// seen the value before it (a restart): the policy is then read from
	// the key's history.
	policyKnown bool
}

// specCache holds the latest entry of every key the watch delivered. It is
// the loop's only view of the bucket between reads; a key whose marker was
// seen stays known as deleted.
type specCache struct {
	mu      sync.RWMutex
	entries map[string]specEntry
	lastRev uint64
}

func newSpecCache() *specCache { return &specCache{entries: map[string]specEntry{}} }

// observe records e and reports whether it is newer than what was known.
func (c *specCache) observe(e Entry) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.entries[e.Key]
	if ok && old.rev >= e.Revision {
		return false
	}
	next := specEntry{rev: e.Revision, deleted: e.Deleted, value: e.Value}
	if e.Deleted {
		next.value = nil
		switch {
		case e.Purged:
			next.policyKnown = true // kept: see Entry.Purged
		case ok && !old.deleted:
			next.deleteStream, next.policyKnown = streamPolicyDeletes(old.value), true
		case ok:
			next.deleteStream, next.policyKnown = old.deleteStream, old.policyKnown
		}
	}
	c.entries[e.Key] = next
	c.lastRev = max(c.lastRev, e.Revision)
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

// liveKeys returns every key whose latest entry is a put.
func (c *specCache) liveKeys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.entries))
	for k, e := range c.entries {
		if !e.deleted {
			out = append(out, k)
		}
	}
	return out
}

// liveRevisions returns the revision of every key whose latest entry is a
// value.
func (c *specCache) liveRevisions() map[string]uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]uint64, len(c.entries))
	for k, e := range c.entries {
		if !e.deleted {
			out[k] = e.rev
		}
	}
	return out
}

// purged turns key's value into a delete at the same revision (the hub
// purged the key, marker and all; see checkHub), keeping what its value
// said of the stream. It reports whether key held a value.
func (c *specCache) purged(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.entries[key]
	if !ok || old.deleted {
		return false
	}
	c.entries[key] = specEntry{rev: old.rev, deleted: true, deleteStream: streamPolicyDeletes(old.value), policyKnown: true}
	return true
}

// revision returns the highest revision delivered so far.
func (c *specCache) revision() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lastRev
}

// statusCache remembers the last status written for each component of this
// cluster, so an unchanged status is not written again (a restart with
// nothing changed writes nothing), and the revision each record is at, so
// that every write is checked against it (Statuses). A removed record's
// revision (its delete marker's) is kept for the next write.
type statusCache struct {
	mu   sync.Mutex
	m    map[string]api.Status
	revs map[string]uint64
}

func newStatusCache() *statusCache {
	return &statusCache{m: map[string]api.Status{}, revs: map[string]uint64{}}
}

func (s *statusCache) get(key string) (api.Status, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[key]
	return st, ok
}

// revision is the revision key's record was last read or written at (0:
// none known).
func (s *statusCache) revision(key string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revs[key]
}

// set records st as stored at revision rev.
func (s *statusCache) set(st api.Status, rev uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[st.Component], s.revs[st.Component] = st, rev
}

// forget records that key's record was removed, at revision rev.
func (s *statusCache) forget(key string, rev uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	s.revs[key] = rev
}

// keySet is a set of keys safe for concurrent use.
type keySet struct {
	mu sync.Mutex
	m  map[string]struct{}
}

func newKeySet() *keySet { return &keySet{m: map[string]struct{}{}} }

// add adds key and reports whether it was new.
func (s *keySet) add(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, had := s.m[key]
	s.m[key] = struct{}{}
	return !had
}

// take removes key and reports whether it was there.
func (s *keySet) take(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, had := s.m[key]
	delete(s.m, key)
	return had
}

func (s *keySet) remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

func (s *keySet) has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[key]
	return ok
}

func (s *keySet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// keep drops every key for which keep is false.
func (s *keySet) keep(keep func(string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.m {
		if !keep(k) {
			delete(s.m, k)
		}
	}
}
