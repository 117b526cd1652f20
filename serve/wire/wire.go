// Package wire gives the reconcile loop the bus stores and the API
// server in its own terms: the adapters from bus/specs, bus/status and
// bus/streams to reconcile's ports (reconcile.Specs, reconcile.Statuses, reconcile.Streams, Hub), and
// reconcile.Deps, which the controller process (serve) composes the loop from.
// reconcile itself knows only its ports.
package wire

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/reconcile"
)

// SpecsFrom reads the spec bucket s. onRestart, if set, hears why the
// watch had to be re-created (for logs).
func SpecsFrom(s *specs.Store, onRestart func(error)) reconcile.Specs { return natsSpecs{s, onRestart} }

type natsSpecs struct {
	s         *specs.Store
	onRestart func(error)
}

func (n natsSpecs) Watch(ctx context.Context) (reconcile.SpecWatch, error) {
	w, err := n.s.Watch(ctx, kv.WatchOptions{OnRestart: n.onRestart})
	if err != nil {
		return nil, err
	}
	sw := &natsWatch{w: w, events: make(chan reconcile.Event, 64)}
	go sw.forward()
	return sw, nil
}

func (n natsSpecs) Latest(ctx context.Context, key string) (reconcile.Entry, bool, error) {
	e, err := n.s.LatestFromLeader(ctx, key)
	if errors.Is(err, bus.ErrNotFound) {
		return reconcile.Entry{}, false, nil
	}
	return entryOf(e), err == nil, err
}

func (n natsSpecs) History(ctx context.Context, key string) ([]reconcile.Entry, error) {
	h, err := n.s.History(ctx, key)
	out := make([]reconcile.Entry, len(h))
	for i, e := range h {
		out[i] = entryOf(e)
	}
	return out, err
}

func (n natsSpecs) Incarnation(ctx context.Context) (string, error) {
	if n.s.Config().MirrorDomain != "" {
		m, err := n.s.Mirror(ctx)
		if err != nil || m.Origin != "" {
			return m.Origin, err
		}
		info, err := n.s.Info(ctx)
		return reconcile.UnknownIncarnation + kv.Incarnation(info.Created), err
	}
	info, err := n.s.Info(ctx)
	return kv.Incarnation(info.Created), err
}

// natsHub is the hub check over a mirrored spec store.
type natsHub struct{ s *specs.Store }

func (h natsHub) Compare(ctx context.Context, keys bool) (reconcile.HubView, error) {
	m, err := h.s.Mirror(ctx)
	if err != nil {
		return reconcile.HubView{}, err
	}
	o, err := h.s.Origin(ctx, keys)
	if err != nil {
		return reconcile.HubView{}, err
	}
	return reconcile.HubView{Epoch: m.Origin, MirrorLast: m.LastRevision, Hub: o.Incarnation,
		HubFirst: o.FirstRevision, HubLast: o.LastRevision, HubLastMessage: o.LastMessage, HubKeys: o.Keys}, nil
}

func (h natsHub) Rebuild(ctx context.Context, epoch string) error {
	return h.s.Rebuild(ctx, kv.Origin{Incarnation: epoch})
}

func (h natsHub) WaitMirror(ctx context.Context, rev uint64) error { return h.s.WaitMirror(ctx, rev) }

func (h natsHub) PurgeLocal(ctx context.Context, key string) error { return h.s.PurgeLocal(ctx, key) }

func entryOf(e kv.Entry) reconcile.Entry {
	return reconcile.Entry{Key: e.Key, Revision: e.Revision, Deleted: e.Op != kv.OpPut, Purged: e.Op == kv.OpPurge, Value: e.Value}
}

// natsWatch turns a kv.Watcher's events into the loop's.
type natsWatch struct {
	w      *kv.Watcher
	events chan reconcile.Event
}

func (n *natsWatch) forward() {
	defer close(n.events)
	for ev := range n.w.Events() {
		n.events <- reconcile.Event{Entry: entryOf(ev.Entry), Synced: ev.InitialDone}
	}
}

func (n *natsWatch) Events() <-chan reconcile.Event { return n.events }
func (n *natsWatch) Err() error                     { return n.w.Err() }

func (n *natsWatch) Stop() {
	n.w.Stop()
	for range n.events { // let forward finish
	}
}

// StatusesFrom stores status records in s.
func StatusesFrom(s *status.Store) reconcile.Statuses { return natsStatuses{s} }

type natsStatuses struct{ s *status.Store }

func (n natsStatuses) Put(ctx context.Context, st api.Status, rev uint64) (uint64, error) {
	return n.s.Write(ctx, st, rev)
}

func (n natsStatuses) Delete(ctx context.Context, component, cluster string, rev uint64) (uint64, error) {
	return n.s.Remove(ctx, component, cluster, rev)
}

func (n natsStatuses) Load(ctx context.Context, cluster string) ([]reconcile.StoredStatus, error) {
	recs, err := n.s.ListCluster(ctx, cluster)
	if err != nil {
		return nil, err
	}
	out := make([]reconcile.StoredStatus, 0, len(recs))
	for _, r := range recs {
		if r.Err == nil {
			out = append(out, reconcile.StoredStatus{Status: r.Status, Revision: r.Revision})
		}
	}
	return out, nil
}

// StreamsFrom provisions streams and consumers with m: every namespace's
// in one account.
func StreamsFrom(m *streams.Manager) reconcile.Streams {
	return natsStreams{of: func(string) (*streams.Manager, error) { return m, nil }, shared: true}
}

// StreamsPerNamespace provisions each namespace's streams and consumers
// with the Manager of returns for it (the JetStream API of its own
// account).
func StreamsPerNamespace(of func(ns string) (*streams.Manager, error)) reconcile.Streams {
	return natsStreams{of: of}
}

type natsStreams struct {
	of func(ns string) (*streams.Manager, error)
	// shared: one Manager (one account) for every namespace.
	shared bool
}

func (n natsStreams) Ensure(ctx context.Context, ns string, sc jetstream.StreamConfig, cc jetstream.ConsumerConfig, fresh bool) (action.Action, action.Action, uint64, error) {
	m, err := n.of(ns)
	if err != nil {
		return "", "", 0, err
	}
	res, err := m.EnsureStreamAndConsumer(ctx, sc, cc, streams.EnsureOptions{LikelyAbsent: fresh})
	return res.Stream, res.Consumer, res.Fingerprint, err
}

func (n natsStreams) DeadLetters(ctx context.Context, ns string, cfg jetstream.StreamConfig, work, consumer string) (action.Action, int, error) {
	m, err := n.of(ns)
	if err != nil {
		return "", 0, err
	}
	return m.EnsureDeadLetters(ctx, cfg, work, consumer)
}

func (n natsStreams) Delete(ctx context.Context, ns, stream string) (action.Action, error) {
	m, err := n.of(ns)
	if err != nil {
		return "", err
	}
	return m.Delete(ctx, stream)
}

func (n natsStreams) Names(ctx context.Context, namespaces []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := n.each(namespaces, func(m *streams.Manager) error {
		names, err := m.Names(ctx)
		for _, s := range names {
			out[s] = true
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (n natsStreams) Walk(ctx context.Context, namespaces []string, fn func(streams.Listed)) error {
	return n.each(namespaces, func(m *streams.Manager) error { return m.Walk(ctx, fn) })
}

// each calls fn with the Manager of every account that holds the
// namespaces' streams, once per account.
func (n natsStreams) each(namespaces []string, fn func(*streams.Manager) error) error {
	if n.shared {
		namespaces = namespaces[:min(1, len(namespaces))] // one listing covers them all
	}
	for _, ns := range namespaces {
		m, err := n.of(ns)
		if err != nil {
			return err
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Wire returns the reconcile.Deps of a loop that reads the spec bucket s, records
// status in st, provisions JetStream with js and writes Kubernetes through
// m, against the API server cfg reaches. Fence, Clock and Observer are
// left for the caller to set.
func Deps(s *specs.Store, st *status.Store, js *streams.Manager, m *apply.Manager, cfg *rest.Config, onWatchRestart func(error)) (reconcile.Deps, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return reconcile.Deps{}, fmt.Errorf("metadata client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return reconcile.Deps{}, fmt.Errorf("discovery client: %w", err)
	}
	// Deployments and pods are read in protobuf: at 10,000 components
	// their lists decode several times faster than in JSON.
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	wc, err := kubernetes.NewForConfig(pcfg)
	if err != nil {
		return reconcile.Deps{}, fmt.Errorf("workload client: %w", err)
	}
	d := reconcile.Deps{Specs: SpecsFrom(s, onWatchRestart), Statuses: StatusesFrom(st), Streams: StreamsFrom(js),
		Kube: m, Metadata: mc, Discovery: dc, Workloads: wc}
	if s.Config().MirrorDomain != "" {
		d.Hub = natsHub{s}
	}
	return d, nil
}
