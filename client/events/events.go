// Package events reads what controllers announced about components
// (docs/events.md): each child they wrote or deleted, each condition that
// moved, each component removed or unplaced. It reads the events stream
// of the broker a connection reaches, through what the credentials'
// account imports (a namespace publisher sees its own namespace's), and
// changes nothing.
package events

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/bus"
	busevents "github.com/tinyctl/tinyctl/bus/events"
	"github.com/tinyctl/tinyctl/identity"
)

// Event is one event: see package api/event.
type Event = event.Event

// ErrNoStream matches (errors.Is) the error Read returns when the broker
// has no events stream: no controller that records events has run there.
var ErrNoStream = busevents.ErrNoStream

// Selector picks the events to read.
type Selector struct {
	// Namespace and Name select a component ("" for every namespace or
	// every name; for credentials confined to one namespace, every
	// namespace is that one). Every cluster's events are read.
	Namespace, Name string
	// Since skips events recorded before it (zero: every event kept).
	Since time.Time
	// Watch goes on delivering new events until the context ends.
	Watch bool
	// CaughtUp, if set, is called once when the stored events have been
	// delivered.
	CaughtUp func()
}

// Reader reads events on one connection.
type Reader struct {
	conn *bus.Conn
	// scope is the one namespace the credentials may read ("": all).
	scope string
}

// New reads events on nc, which stays the caller's (New adds to its
// handlers: make one Reader per connection). scope is the namespace a
// namespace publisher's credentials are confined to
// (client.Client.Namespace), "" for the others; domain is the JetStream
// domain of the broker's events stream ("" for the server's own).
func New(nc *nats.Conn, scope, domain string) (*Reader, error) {
	conn, err := bus.Wrap(nc, domain)
	if err != nil {
		return nil, err
	}
	return &Reader{conn: conn, scope: scope}, nil
}

// Read calls fn with each stored event sel picks, oldest first, and with
// sel.Watch each new one as it arrives. It returns nil when the stored
// events are delivered (or, watching, when ctx ends), fn's error, or what
// stopped the read.
func (r *Reader) Read(ctx context.Context, sel Selector, fn func(Event) error) error {
	opts := busevents.ReadOptions{Filter: event.Filter(sel.Namespace, sel.Name), Since: sel.Since, Watch: sel.Watch, CaughtUp: sel.CaughtUp}
	if r.scope != "" {
		if sel.Namespace == "" { // every namespace these credentials see
			sel.Namespace = r.scope
			opts.Filter = event.Filter(sel.Namespace, sel.Name)
		}
		if sel.Namespace != r.scope {
			return fmt.Errorf("these credentials read only namespace %s's events, not %s", r.scope, orEvery(sel.Namespace))
		}
		opts.APIPrefix = identity.SpecsAPIPrefix
	}
	return busevents.Read(ctx, r.conn, opts, fn)
}

func orEvery(ns string) string {
	if ns == "" {
		return "every namespace's"
	}
	return ns + "'s"
}
