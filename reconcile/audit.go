package reconcile

import (
	"context"
	"sync"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus/streams"
)

// The full recheck (every tenth --recheck) looks for what no watch
// reports: a consumer deleted or a stream reconfigured behind tinyctl's
// back, and a revision whose last reconcile did not settle it. It used to
// reconcile every key to find them, which at 10,000 components cost
// 10,000 guard reads and 20,000 JetStream lookups to find, nearly always,
// nothing. It now reads one listing of the streams (with their configs
// and consumer counts) and reconciles only the components it shows to
// need it. Children are not part of it: their informers report every
// change to them as it happens.

// What a recheck can find about a component, reported to the Observer.
const (
	// FoundUnsettled: the latest revision has not been reconciled without
	// error yet (it failed, or its reconcile is still to come).
	FoundUnsettled = "unsettled"
	// FoundStreamMissing: the stream the status lists does not exist.
	FoundStreamMissing = "stream_missing"
	// FoundNoConsumer: the stream has no consumer (the durable is gone).
	FoundNoConsumer = "no_consumer"
	// FoundStreamDrift: the stream's config differs from the spec's.
	FoundStreamDrift = "stream_drift"
	// FoundListingFailed: the streams could not be listed, so every
	// component with a stream is reconciled, as before the audit.
	FoundListingFailed = "listing_failed"
)

// settledMark is what the loop knows of a key whose last reconcile
// succeeded.
type settledMark struct {
	rev uint64
	// stream is the Fingerprint of the live stream config last known to
	// match the spec at rev: as the reconcile ensured it, or as a recheck
	// compared it (0: unknown).
	stream uint64
}

// settledSet holds the revision at which each key last reconciled without
// error.
type settledSet struct {
	mu sync.Mutex
	m  map[string]settledMark
}

func newSettledSet() *settledSet { return &settledSet{m: map[string]settledMark{}} }

// settle records that key reconciled without error at rev (a deleted key
// is forgotten), keeping the fingerprint ensured or matched at rev.
func (s *settledSet) settle(key string, rev uint64, deleted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if deleted {
		delete(s.m, key)
		return
	}
	if s.m[key].rev != rev {
		s.m[key] = settledMark{rev: rev}
	}
}

// ensured records the fingerprint of key's stream as a reconcile of rev
// just ensured it (0: unknown), so that the next audit need not render
// the spec to compare it. The key settles when the reconcile ends.
func (s *settledSet) ensured(key string, rev, fp uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = settledMark{rev: rev, stream: fp}
}

// unsettle forgets key: its last reconcile failed.
func (s *settledSet) unsettle(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// at returns key's mark when it settled at rev.
func (s *settledSet) at(key string, rev uint64) (settledMark, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.m[key]
	return m, ok && m.rev == rev
}

// matched records that key's stream, with live config fingerprint fp,
// matched the spec at rev (ignored if key has settled at another since).
func (s *settledSet) matched(key string, rev, fp uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.m[key]; ok && m.rev == rev {
		s.m[key] = settledMark{rev: rev, stream: fp}
	}
}

// clear forgets every key (the bucket was recreated: its revisions start
// again).
func (s *settledSet) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = map[string]settledMark{}
}

// audited is a key the listing is compared with: settled at rev, with a
// stream named in its status.
type audited struct {
	key  string
	rev  uint64
	mark settledMark
}

// audit enqueues the components a full recheck finds in need of a
// reconcile and counts what it found.
func (c *Controller) audit(ctx context.Context) map[string]int {
	found := map[string]int{}
	enqueue := func(key, why string) { found[why]++; c.enqueue(key) }
	byStream := map[string]audited{}
	var namespaces []string
	seenNS := map[string]bool{}
	for key, rev := range c.specs.liveRevisions() {
		mark, settled := c.settled.at(key, rev)
		st, _ := c.status.get(key)
		stream, hasStream := st.ChildOfKind(api.KindStream)
		switch {
		case c.stalledAt(key):
		case !settled:
			enqueue(key, FoundUnsettled)
		case hasStream:
			byStream[stream.Name] = audited{key: key, rev: rev, mark: mark}
			if ns, _, err := api.ParseKey(key); err == nil && !seenNS[ns] {
				seenNS[ns] = true
				namespaces = append(namespaces, ns)
			}
		}
	}
	if len(byStream) == 0 {
		return found
	}
	err := c.deps.Streams.Walk(ctx, namespaces, func(l streams.Listed) {
		a, ok := byStream[l.Config.Name]
		if !ok {
			return
		}
		delete(byStream, l.Config.Name)
		if why := c.streamFinding(ctx, a, l); why != "" {
			enqueue(a.key, why)
		}
	})
	why := FoundStreamMissing
	if err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Msg("full recheck: list streams; reconciling every component with a stream")
		why = FoundListingFailed
	}
	for _, a := range byStream {
		enqueue(a.key, why)
	}
	return found
}

// streamFinding says what is wrong with a's listed stream l ("": nothing).
// A live config seen before to match the spec at the same revision is
// not compared again; another is compared with the spec rendered anew.
func (c *Controller) streamFinding(ctx context.Context, a audited, l streams.Listed) string {
	if l.Consumers == 0 {
		return FoundNoConsumer
	}
	fp := streams.Fingerprint(l.Config)
	if a.mark.stream == fp {
		return ""
	}
	in, ok, err := c.gather(ctx, a.key)
	if !ok || err != nil || in.entry.rev != a.rev {
		return FoundUnsettled // changed since the listing began
	}
	// A plan that ensures no stream (a suspended component) has nothing
	// to compare with: the stream is left as it is.
	if p := decide(in); p.kind == planApply && streams.Drifted(p.objs.Stream, l.Config) {
		return FoundStreamDrift
	}
	c.settled.matched(a.key, a.rev, fp)
	return ""
}
