package reconcile

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/api"
)

// fullRecheckEvery is how many rechecks pass between full ones, which
// also audit every stream (audit.go).
const fullRecheckEvery = 10

// recheckLoop runs the periodic checks until ctx ends: it starts informers
// for child kinds whose CRD appeared, re-enqueues components whose stream
// is gone, reports orphans, and now and then audits every stream.
func (c *Controller) recheckLoop(ctx context.Context) {
	t := c.clock.NewTicker(c.cfg.Recheck)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		c.recheck(ctx, n%fullRecheckEvery == 0)
	}
}

func (c *Controller) recheck(ctx context.Context, full bool) {
	log := zerolog.Ctx(ctx)
	r := Recheck{Full: full, Found: map[string]int{}}
	start := c.clock.Now()
	defer func() {
		r.Took = c.clock.Since(start)
		c.obs.Rechecked(r)
	}()
	if err := c.startWorkloads(ctx); err != nil {
		log.Warn().Err(err).Msg("start workload informers")
	}
	if err := c.children.startAvailable(ctx); err != nil {
		log.Warn().Err(err).Msg("start child informers")
	}
	if !c.Ready() {
		return
	}
	rebuilt, err := c.checkHub(ctx, full)
	if err != nil {
		log.Warn().Err(err).Msg("compare the spec mirror with the hub")
	}
	if err := c.checkBucket(ctx, rebuilt); err != nil {
		log.Warn().Err(err).Msg("check spec bucket")
	}
	if full {
		r.Found = c.audit(ctx)
		logFindings(ctx, r)
	} else if r.Found[FoundStreamMissing], err = c.checkStreams(ctx); err != nil {
		log.Warn().Err(err).Msg("check streams")
	}
	if err := c.reportOrphans(ctx); err != nil {
		log.Warn().Err(err).Msg("report orphans")
	}
}

// logFindings logs what a full recheck found, at Info when it found
// something to reconcile.
func logFindings(ctx context.Context, r Recheck) {
	ev := zerolog.Ctx(ctx).Debug()
	n := 0
	for _, v := range r.Found {
		n += v
	}
	if n > 0 {
		ev = zerolog.Ctx(ctx).Info()
	}
	d := zerolog.Dict()
	for why, v := range r.Found {
		d = d.Int(why, v)
	}
	ev.Int("components", n).Dict("found", d).Msg("full recheck")
}

// stalledAt reports whether key's latest revision already failed for good:
// a full recheck skips it, since only a new revision can change the outcome.
func (c *Controller) stalledAt(key string) bool {
	e, _ := c.specs.get(key)
	st, ok := c.status.get(key)
	return ok && st.ObservedRevision == e.rev && st.IsTrue(api.ConditionStalled)
}

// Stalled returns how many components' latest revisions failed for good
// (status Stalled=True at that revision): they wait for a new revision.
func (c *Controller) Stalled() int {
	n := 0
	for _, k := range c.specs.liveKeys() {
		if c.stalledAt(k) {
			n++
		}
	}
	return n
}

// checkBucket signals the watch loop when the spec bucket's incarnation
// changed (deleted and created again), which a resuming watch cannot see,
// or when it was rebuilt from the hub whatever its incarnation.
func (c *Controller) checkBucket(ctx context.Context, rebuilt bool) error {
	created, err := c.deps.Specs.Incarnation(ctx)
	if err != nil {
		return err
	}
	// The watch loop stores the new incarnation once it has forgotten the
	// old bucket's entries: a reconcile in between records what it read
	// under the bucket it read it from.
	if prev := c.incarnation.Load(); rebuilt || prev == nil || created != *prev {
		select {
		case c.recreated <- struct{}{}:
		default:
		}
	}
	return nil
}

// checkStreams re-enqueues every component whose stream tinyctl ensured
// (its status lists it) but which no longer exists (deleted behind
// tinyctl's back), with one listing call, and says how many.
func (c *Controller) checkStreams(ctx context.Context) (int, error) {
	keys := c.specs.liveKeys()
	var namespaces []string
	for _, key := range keys {
		if ns, _, err := api.ParseKey(key); err == nil && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	names, err := c.deps.Streams.Names(ctx, namespaces)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, key := range keys {
		st, _ := c.status.get(key)
		if stream, ok := st.ChildOfKind(api.KindStream); ok && !names[stream.Name] {
			c.enqueue(key)
			n++
		}
	}
	return n, nil
}

// Orphans returns the keys of components that have live children in the
// cluster but no entry at all in the spec bucket: not a value and not a
// delete marker (the bucket was emptied or recreated). Their children are
// kept and reported, never deleted.
func (c *Controller) Orphans() map[string][]api.Child {
	out := map[string][]api.Child{}
	c.children.each(func(k childKind, m *cachedChild) {
		key, ok := m.key()
		if !ok || c.specs.known(key) {
			return
		}
		out[key] = append(out[key], api.Child{Kind: k.gvk.Kind, Namespace: m.namespace, Name: m.name})
	}, "")
	return out
}

// reportOrphans writes an Orphaned status for each orphan and logs each
// new one once.
func (c *Controller) reportOrphans(ctx context.Context) error {
	orphans := c.Orphans()
	c.orphansLogged.keep(func(key string) bool { _, still := orphans[key]; return still })
	for key, kids := range orphans {
		slices.SortFunc(kids, func(a, b api.Child) int {
			return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Name, b.Name))
		})
		if c.specs.known(key) {
			continue // arrived since the listing (a rebuilt mirror still copying)
		}
		st := api.Status{Component: key, Cluster: c.cfg.Cluster.Name, Children: kids, Conditions: orphanedConditions()}
		if err := c.writeStatus(ctx, st); err != nil {
			return err
		}
		if c.specs.known(key) {
			// It arrived while the record was written, and may have been
			// reconciled before it: reconcile it again, so that the
			// Orphaned record does not stand over an applied revision.
			c.enqueue(key)
			continue
		}
		if c.orphansLogged.add(key) {
			zerolog.Ctx(ctx).Warn().Str(LogKey, key).Int("children", len(kids)).Msg("orphaned children kept")
		}
	}
	return nil
}
