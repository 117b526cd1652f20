package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/identity"
)

// ErrNotFound matches (errors.Is) the error for a component, revision or
// bucket that does not exist.
var ErrNotFound = errNotFound

// errNotFound is the stores' own sentinel, which every one of their
// not-found errors wraps.
var errNotFound = bus.ErrNotFound

// Config says which buckets a Client uses, and how.
type Config struct {
	// SpecBucket and StatusBucket name the buckets (defaults
	// tinyctl-components and tinyctl-status). Heartbeats are read from
	// tinyctl-heartbeats.
	SpecBucket, StatusBucket string
	// Create makes New create missing buckets with the standard settings
	// (a publisher, or a watch that needs buckets to watch). Otherwise a
	// missing bucket reads as empty, writes to it fail with ErrNotFound, and
	// nothing is created.
	Create bool
	// Now is the clock ages and staleness are judged by (default
	// time.Now).
	Now func() time.Time
	// Namespace, when set, says the connection's credentials are a
	// namespace publisher's (identity.NamespacePublisher, `tinyctl
	// identity publisher`): the client then reads and writes only that
	// namespace's specs and status rows, through what its account imports;
	// Create is ignored, and watching is not possible.
	Namespace string
	// JetStreamDomain, when set, is the JetStream domain the buckets are
	// in (a leafnode's hub, say).
	JetStreamDomain string
}

// Client reads and writes the spec bucket and reads the status of
// components. It does not own the connection. It is safe for concurrent
// use.
type Client struct {
	conn     *bus.Conn
	specs    *specs.Store  // nil: the bucket does not exist
	statuses *status.Store // nil: the bucket does not exist
	// statusBucket names the status bucket.
	statusBucket string
	now          func() time.Time
	// namespace is the one namespace the credentials may touch ("": all).
	namespace string
}

// Namespace is the one namespace the client's credentials may touch, or
// "" when they may touch every namespace.
func (c *Client) Namespace() string { return c.namespace }

// New binds to the buckets cfg names on nc, adopting the settings of those
// that exist. nc stays the caller's: the client adds to its event
// handlers (to re-create watches after a reconnect and to report
// permission violations as errors) and never closes it. Open one Client
// per connection and keep it: each New adds to the handlers for the
// connection's life. It returns an error when NATS refuses or a bucket
// cannot be opened.
func New(ctx context.Context, nc *nats.Conn, cfg Config) (*Client, error) {
	conn, err := bus.Wrap(nc, cfg.JetStreamDomain)
	if err != nil {
		return nil, err
	}
	c := &Client{conn: conn, now: cfg.Now, statusBucket: cmp.Or(cfg.StatusBucket, status.DefaultBucket)}
	if c.now == nil {
		c.now = time.Now
	}
	mode := kv.Existing
	if cfg.Create {
		mode = kv.Adopt
	}
	var prefix, scope string
	if cfg.Namespace != "" {
		prefix, scope = identity.SpecsAPIPrefix, cfg.Namespace+"."
		c.namespace = cfg.Namespace
	}
	c.specs, err = specs.Open(ctx, conn, specs.Config{Bucket: cfg.SpecBucket, APIPrefix: prefix, Scope: scope}, mode)
	if err != nil && !errors.Is(err, bus.ErrNotFound) {
		return nil, err
	}
	c.statuses, err = status.Open(ctx, conn, status.Config{Bucket: cfg.StatusBucket, Now: c.now, APIPrefix: prefix, Scope: scope}, mode)
	if err != nil && !errors.Is(err, bus.ErrNotFound) {
		return nil, err
	}
	return c, nil
}

// KeptRevisions returns how many revisions the spec bucket keeps per key
// (0 when it does not exist).
func (c *Client) KeptRevisions() int {
	if c.specs == nil {
		return 0
	}
	return c.specs.KeptRevisions()
}

// key is the spec key of namespace/name, checked.
func key(namespace, name string) (string, error) {
	k := api.Key(namespace, name)
	if _, _, err := api.ParseKey(k); err != nil {
		return "", err
	}
	return k, nil
}

// Publish validates c (after filling its defaults, its subjects scoped by
// opts.Tenancy) and stores its
// canonical JSON under its key, unless the key already holds exactly that,
// in which case nothing is written. The result says created, configured or
// unchanged, and the revision. With opts.IfRevision the write is
// compare-and-set (a lost race is a *ConflictError); with opts.DryRun
// nothing is written. An invalid component is a *validate.InvalidError
// listing every problem.
func (c *Client) Publish(ctx context.Context, comp api.Component, opts PublishOptions) (PublishResult, error) {
	comp, err := validate.Check(comp, opts.Tenancy)
	if err != nil {
		return PublishResult{}, err
	}
	value, err := api.Canonical(comp)
	if err != nil {
		return PublishResult{}, err
	}
	var s store = emptyStore{}
	switch {
	case c.specs != nil:
		s = c.specs
	case !opts.DryRun:
		return PublishResult{}, c.noSpecs()
	}
	return publish(ctx, s, api.KeyOf(comp), value, opts)
}

func (c *Client) noSpecs() error {
	return fmt.Errorf("spec bucket: %w (open the client with Create to make it)", bus.ErrNotFound)
}

// Get returns the latest value of component namespace/name. A component
// that does not exist (never written, or deleted) is ErrNotFound.
func (c *Client) Get(ctx context.Context, namespace, name string) (Revision, error) {
	k, err := key(namespace, name)
	if err != nil {
		return Revision{}, err
	}
	if c.specs == nil {
		return Revision{}, c.noSpecs()
	}
	e, err := c.specs.Get(ctx, k)
	if err != nil {
		return Revision{}, err
	}
	return revisionOf(e), nil
}

// List returns the latest value of every component that is not deleted,
// sorted by key.
func (c *Client) List(ctx context.Context) ([]Revision, error) {
	if c.specs == nil {
		return nil, nil
	}
	es, err := c.specs.List(ctx)
	return revisionsOf(es), err
}

// History returns the kept revisions of component namespace/name, oldest
// first, markers included; Changes says what each one did.
func (c *Client) History(ctx context.Context, namespace, name string) ([]Revision, error) {
	k, err := key(namespace, name)
	if err != nil {
		return nil, err
	}
	if c.specs == nil {
		return nil, c.noSpecs()
	}
	es, err := c.specs.History(ctx, k)
	return revisionsOf(es), err
}

// Rollback re-publishes an earlier value of component namespace/name as a
// new revision, unless the component already holds it. With to > 0 it is
// revision to, which must be a value. With to == 0 it is the most recent
// value before the latest that differs from it; when the latest revision
// is a delete or purge marker, it is the last value (the rollback
// undeletes). No such revision is an error wrapping ErrNoTarget. A write racing with it makes it fail with a
// *ConflictError rather than overwrite.
func (c *Client) Rollback(ctx context.Context, namespace, name string, to uint64) (RollbackResult, error) {
	k, err := key(namespace, name)
	if err != nil {
		return RollbackResult{}, err
	}
	if c.specs == nil {
		return RollbackResult{}, c.noSpecs()
	}
	return rollback(ctx, c.specs, k, to)
}

// DeleteOptions tune Delete.
type DeleteOptions struct {
	// IfRevision, when not 0, deletes only if that is the latest revision.
	IfRevision uint64
	// Purge also erases the component's history: it cannot be rolled
	// back.
	Purge bool
}

// PlanDelete returns what deleting component namespace/name removes, for a
// person to confirm. A component that does not exist is ErrNotFound.
func (c *Client) PlanDelete(ctx context.Context, namespace, name string) (Removal, error) {
	e, err := c.Get(ctx, namespace, name)
	if err != nil {
		return Removal{}, err
	}
	return PlanRemoval(e), nil
}

// Delete writes a delete (or purge) marker for component namespace/name:
// every controller then removes what it made for it. A lost
// compare-and-set is a *ConflictError.
func (c *Client) Delete(ctx context.Context, namespace, name string, opts DeleteOptions) error {
	k, err := key(namespace, name)
	if err != nil {
		return err
	}
	if c.specs == nil {
		return c.noSpecs()
	}
	remove := c.specs.Delete
	if opts.Purge {
		remove = c.specs.Purge
	}
	err = remove(ctx, k, opts.IfRevision)
	var mismatch *bus.RevisionMismatchError
	if errors.As(err, &mismatch) {
		return &ConflictError{Key: k, Expected: mismatch.Expected, Current: mismatch.Current}
	}
	return err
}

// Cluster returns the latest heartbeat of the cluster named name: its
// labels, its controller and the settings it renders with. A cluster with
// no live heartbeat is ErrNotFound.
func (c *Client) Cluster(ctx context.Context, name string) (Heartbeat, error) {
	if c.statuses == nil {
		return Heartbeat{}, fmt.Errorf("heartbeat of %s: %w", name, bus.ErrNotFound)
	}
	hb, err := c.statuses.Heartbeat(ctx, name)
	if err != nil {
		return Heartbeat{}, err
	}
	return *heartbeatOf(&hb), nil
}

// serverNow is the NATS server's clock as last measured on a heartbeat
// read (the client's own clock before one).
func (c *Client) serverNow() time.Time {
	if c.statuses == nil {
		return c.now()
	}
	return c.statuses.Now()
}

// Clusters returns the live heartbeats, by cluster name.
func (c *Client) Clusters(ctx context.Context) (map[string]Heartbeat, error) {
	out := map[string]Heartbeat{}
	if c.statuses == nil {
		return out, nil
	}
	beats, err := c.statuses.Heartbeats(ctx)
	for name, hb := range beats {
		out[name] = *heartbeatOf(&hb)
	}
	return out, err
}
