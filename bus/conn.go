package bus

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// State is a connection state reported to Connect's onState callback.
type State int

// Connection states.
const (
	// StateConnected: the first connect succeeded.
	StateConnected State = iota + 1
	// StateDisconnected: the connection dropped (or a first connect attempt
	// failed); the client keeps trying.
	StateDisconnected
	// StateReconnected: the client is connected again. Watches re-create
	// their consumers on this.
	StateReconnected
	// StateClosed: Close was called. Nothing is reported after it.
	StateClosed
)

// String returns the state in lower case, for logs.
func (s State) String() string {
	switch s {
	case StateConnected:
		return "connected"
	case StateDisconnected:
		return "disconnected"
	case StateReconnected:
		return "reconnected"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// StateChange is one connection state change: the new state, the server
// URL when connected, and the error that caused a disconnect, if any.
type StateChange struct {
	State State
	URL   string
	Err   error
	At    time.Time
}

// Conn is a NATS connection with JetStream, the handle every store in
// this package is opened on. It fans connection events out to watches and
// turns the server's asynchronous permission violations into errors of the
// operations that caused them. It is safe for concurrent use.
type Conn struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	onState func(StateChange)

	reportMu sync.Mutex // onState calls never overlap

	mu        sync.Mutex
	nextID    uint64
	reconnect map[uint64]chan struct{}
	guards    map[uint64]guard
}

func newConn(onState func(StateChange)) *Conn {
	return &Conn{onState: onState, reconnect: map[uint64]chan struct{}{}, guards: map[uint64]guard{}}
}

// NewConn wraps an open nats.Conn (one made by a test harness, say). It
// takes over the connection's disconnect, reconnect, closed and async
// error handlers; onState (may be nil) receives the state changes. The
// connection's own reconnect settings stay as they are (Connect's never
// give up). It fails only if JetStream cannot be set up on nc.
func NewConn(nc *nats.Conn, onState func(StateChange)) (*Conn, error) {
	c := newConn(onState)
	nc.SetDisconnectErrHandler(c.onDisconnect)
	nc.SetReconnectHandler(c.onReconnect)
	nc.SetClosedHandler(c.onClosed)
	nc.SetErrorHandler(c.onAsyncError)
	return c.bind(nc, "")
}

// Wrap makes a Conn of an open nats.Conn its caller keeps owning (a
// program's own connection, handed to package client). Unlike NewConn it
// chains the connection's disconnect, reconnect, closed and async error
// handlers instead of replacing them, never closes nc, and binds
// JetStream to domain ("" for the server's). Wrap a connection once per
// use that needs events: each Wrap adds to the chain.
func Wrap(nc *nats.Conn, domain string) (*Conn, error) {
	c := newConn(nil)
	disconnected, reconnected, closed, asyncErr := nc.DisconnectErrHandler(), nc.ReconnectHandler(), nc.ClosedHandler(), nc.ErrorHandler()
	nc.SetDisconnectErrHandler(func(nc *nats.Conn, err error) {
		c.onDisconnect(nc, err)
		if disconnected != nil {
			disconnected(nc, err)
		}
	})
	nc.SetReconnectHandler(func(nc *nats.Conn) {
		c.onReconnect(nc)
		if reconnected != nil {
			reconnected(nc)
		}
	})
	nc.SetClosedHandler(func(nc *nats.Conn) {
		c.onClosed(nc)
		if closed != nil {
			closed(nc)
		}
	})
	nc.SetErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
		c.onAsyncError(nc, sub, err)
		if asyncErr != nil {
			asyncErr(nc, sub, err)
		}
	})
	js, err := jetstream.New(nc)
	if domain != "" {
		js, err = jetstream.NewWithDomain(nc, domain)
	}
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	c.nc, c.js = nc, js
	return c, nil
}

// bind attaches an open connection and reports it connected; domain
// selects a JetStream domain ("" for the server's).
func (c *Conn) bind(nc *nats.Conn, domain string) (*Conn, error) {
	js, err := jetstream.New(nc)
	if domain != "" {
		js, err = jetstream.NewWithDomain(nc, domain)
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	c.nc, c.js = nc, js
	c.report(StateChange{State: StateConnected, URL: nc.ConnectedUrlRedacted()})
	return c, nil
}

// NATS returns the underlying client connection.
func (c *Conn) NATS() *nats.Conn { return c.nc }

// JetStream returns the JetStream API on this connection.
func (c *Conn) JetStream() jetstream.JetStream { return c.js }

// Connected reports whether the client is connected right now.
func (c *Conn) Connected() bool { return c.nc.IsConnected() }

// Close closes the connection without flushing; watches end.
func (c *Conn) Close() { c.nc.Close() }

// Drain flushes pending publishes and unsubscribes, then closes. It
// returns the client's error if draining could not start.
func (c *Conn) Drain() error {
	if err := c.nc.Drain(); err != nil {
		return fmt.Errorf("bus: drain: %w", err)
	}
	return nil
}

func (c *Conn) report(sc StateChange) {
	if c.onState == nil {
		return
	}
	if sc.At.IsZero() {
		sc.At = time.Now()
	}
	c.reportMu.Lock()
	defer c.reportMu.Unlock()
	c.onState(sc)
}

func (c *Conn) onDisconnect(nc *nats.Conn, err error) {
	if nc.IsClosed() {
		return
	}
	c.report(StateChange{State: StateDisconnected, Err: err})
}

func (c *Conn) onReconnect(nc *nats.Conn) {
	c.report(StateChange{State: StateReconnected, URL: nc.ConnectedUrlRedacted()})
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.reconnect {
		select {
		case ch <- struct{}{}:
		default: // a nudge is already pending
		}
	}
}

func (c *Conn) onClosed(nc *nats.Conn) {
	c.report(StateChange{State: StateClosed, Err: nc.LastError()})
}

// Closed reports whether Close was called (the connection will not come
// back).
func (c *Conn) Closed() bool { return c.nc.IsClosed() }

// NotifyReconnect returns a channel that receives (coalesced) a value after
// every reconnect, and a function that stops the notifications. Watches use
// it to re-create consumers the server may have dropped.
func (c *Conn) NotifyReconnect() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.nextID
	c.nextID++
	c.reconnect[id] = ch
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.reconnect, id)
	}
}
