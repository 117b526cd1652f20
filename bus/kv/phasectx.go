package kv

import (
	"context"
	"sync"
)

// phaseCtx is the context a KV watch consumer is created with. The client
// library uses one context both to bound the creation request and to end
// the subscription when it is done, but a watch needs a bounded creation
// and an unbounded life. phaseCtx ends when its parent ends, or when abort
// is called before settle; after settle only the parent can end it.
type phaseCtx struct {
	context.Context // the parent, for Deadline and Value

	done    chan struct{}
	mu      sync.Mutex
	err     error
	cause   error
	settled bool
}

// newPhaseCtx returns a phaseCtx following parent.
func newPhaseCtx(parent context.Context) *phaseCtx {
	p := &phaseCtx{Context: parent, done: make(chan struct{})}
	go func() {
		select {
		case <-parent.Done():
			p.end(parent.Err(), context.Cause(parent))
		case <-p.done:
		}
	}()
	return p
}

// Done is closed when the context ends.
func (p *phaseCtx) Done() <-chan struct{} { return p.done }

// Err is nil until the context ends, then why it ended.
func (p *phaseCtx) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Cause is the detailed reason the context ended (see context.Cause).
func (p *phaseCtx) Cause() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cause
}

// abort ends the context with err and cause unless it has settled.
func (p *phaseCtx) abort(err, cause error) {
	p.mu.Lock()
	settled := p.settled
	p.mu.Unlock()
	if !settled {
		p.end(err, cause)
	}
}

// settle ends the creation phase. It reports false if the context had
// already ended, in which case whatever was created with it is gone.
func (p *phaseCtx) settle() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settled = true
	return p.err == nil
}

func (p *phaseCtx) end(err, cause error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return
	}
	p.err, p.cause = err, cause
	close(p.done)
}
