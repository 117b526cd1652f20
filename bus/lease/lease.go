package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// Lease is a held lease. Its holder must act on it only while Valid; Lost
// is closed the moment the holder must stop: a renewal found the lease
// taken or deleted, no renewal succeeded before the fencing deadline (TTL
// minus FencingMargin after the last successful renewal was sent), the
// renewal context ended, or Release was called. It is safe for concurrent
// use.
type Lease struct {
	store  *Store
	name   string
	holder string
	opts   Options
	stop   context.CancelFunc
	done   chan struct{}

	// token is this tenure's fencing token (Token).
	token time.Time

	mu         sync.Mutex
	rev        uint64
	validUntil time.Time
	lost       chan struct{}
	lostErr    error
}

// Name returns the lease's name.
func (l *Lease) Name() string { return l.name }

// Revision returns the KV revision of the last successful write, usable
// as a fencing token: it grows with every acquisition and renewal.
func (l *Lease) Revision() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rev
}

// TokenLayout is how Token writes a time: fixed width, UTC, so that two
// tokens compare as strings as they do as times (a CEL expression in the
// API server compares them so).
const TokenLayout = "2006-01-02T15:04:05.000000000Z"

// Token is the fencing token of this tenure, in TokenLayout: the server's
// time of the write that acquired the lease, or, when that is not later
// than the last token issued for the lease (a server clock stepped back,
// a stream leader whose clock is behind), a nanosecond after that one. A
// later tenure, of any holder, has a later token: tokens are issued in
// turn under the lease, the last one kept beside it (TokenKey). It does
// not depend on the lease bucket's revisions, which start again when the
// bucket is made again, nor on any holder's clock.
func (l *Lease) Token() string { return l.token.UTC().Format(TokenLayout) }

// Lost is closed when the lease is lost or released.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Err returns nil while the lease is held, then why it was lost (an error
// matching ErrLost).
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErr
}

// Valid reports whether the holder may still act: not lost, and before
// the fencing deadline.
func (l *Lease) Valid() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErr == nil && l.store.clock.Now().Before(l.validUntil)
}

// ValidUntil returns the fencing deadline: the holder may act until then
// unless a renewal moves it later. It is the zero time once the lease is
// lost. Bound every fenced write's context by it, so a write that was
// about to be sent when the process was paused is cancelled on resume.
func (l *Lease) ValidUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr != nil {
		return time.Time{}
	}
	return l.validUntil
}

// Fence returns the fence of this lease: writes pass while it is valid.
func (l *Lease) Fence() Fence {
	return Fence{ValidUntil: l.ValidUntil, Clock: l.store.clock, token: l.Token()}
}

// Release stops renewing and deletes the lease (if it is still at this
// holder's revision) so another holder can take it at once. The lease
// counts as lost from the call on; the delete's error is returned.
func (l *Lease) Release(ctx context.Context) error {
	l.lose(fmt.Errorf("bus: lease %s: %w: released", l.name, ErrLost))
	l.stop()
	<-l.done
	rev := l.Revision()
	_, err := l.store.b.Write(ctx, l.name, nil, kv.OpDelete, &rev, 0)
	if errors.Is(err, bus.ErrRevisionMismatch) {
		return nil // expired or taken over already
	}
	return err
}

// write stores the lease record if the latest revision is expect, and on
// success moves the fencing deadline to TTL minus the margin after the
// write was sent.
func (l *Lease) write(ctx context.Context, expect uint64) error {
	sent := l.store.clock.Now()
	data, err := json.Marshal(record{Holder: l.holder, TTLSeconds: int64(l.opts.TTL / time.Second), RenewedAt: sent.UTC()})
	if err != nil {
		return fmt.Errorf("bus: encode lease: %w", err)
	}
	rev, err := l.store.b.Write(ctx, l.name, data, kv.OpPut, &expect, l.opts.TTL)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rev, l.validUntil = rev, sent.Add(l.opts.TTL-l.opts.FencingMargin)
	return nil
}

// keep renews the lease every RenewInterval until it is lost.
func (l *Lease) keep(ctx context.Context) {
	defer close(l.done)
	clk := l.store.clock
	tick := clk.NewTicker(l.opts.RenewInterval)
	defer tick.Stop()
	for {
		l.mu.Lock()
		remaining := l.validUntil.Sub(clk.Now())
		l.mu.Unlock()
		if remaining <= 0 {
			l.lose(fmt.Errorf("bus: lease %s: %w: not renewed before the fencing deadline", l.name, ErrLost))
			return
		}
		deadline := clk.NewTimer(remaining)
		select {
		case <-ctx.Done():
			deadline.Stop()
			l.lose(fmt.Errorf("bus: lease %s: %w: renewal stopped", l.name, ErrLost))
			return
		case <-deadline.C():
			l.lose(fmt.Errorf("bus: lease %s: %w: not renewed before the fencing deadline", l.name, ErrLost))
			return
		case <-tick.C():
			deadline.Stop()
			if err := l.renew(ctx); err != nil {
				l.lose(err)
				return
			}
		}
	}
}

// renew rewrites the lease at its last revision, bounded by the fencing
// deadline. It returns an error only when the lease is lost for good.
func (l *Lease) renew(ctx context.Context) error {
	l.mu.Lock()
	rev, deadline := l.rev, l.validUntil
	l.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, deadline.Sub(l.store.clock.Now()))
	defer cancel()
	err := l.write(rctx, rev)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bus.ErrRevisionMismatch), errors.Is(err, bus.ErrPermissionDenied):
		return fmt.Errorf("bus: lease %s: %w: renew: %w", l.name, ErrLost, err)
	}
	if l.opts.OnRenewError != nil && ctx.Err() == nil {
		l.opts.OnRenewError(err)
	}
	return nil
}

// lose records why the lease is lost and closes Lost, once.
func (l *Lease) lose(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr != nil {
		return
	}
	l.lostErr = err
	close(l.lost)
}
