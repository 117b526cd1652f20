package bus

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// A publish the server refuses for permissions is dropped and reported
// only asynchronously, as "-ERR 'Permissions Violation for Publish to
// "SUBJECT"'"; a request would just time out. A guard lets an operation
// fail at once with ErrPermissionDenied when a violation for its subjects
// arrives while it runs.
type guard struct {
	patterns []string
	cancel   context.CancelCauseFunc
}

// publishViolation extracts the subject from the server's publish
// permission error text, the only place the server names it.
var publishViolation = regexp.MustCompile(`Publish to "([^"]+)"`)

// Guarded runs fn with a context that is cancelled, with an
// ErrPermissionDenied cause, if the server reports a publish permission
// violation on a subject matching any of patterns (NATS wildcards allowed)
// while fn runs. That cause is then returned instead of fn's error. Every
// JetStream or KV call of the bus packages runs guarded, so a missing
// permission fails at once instead of timing out.
func (c *Conn) Guarded(ctx context.Context, patterns []string, fn func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer c.OnViolation(patterns, cancel)()
	err := fn(ctx)
	if cause := context.Cause(ctx); errors.Is(cause, ErrPermissionDenied) {
		return cause
	}
	return err
}

// OnViolation calls cancel with an ErrPermissionDenied error when the
// server reports a publish permission violation on a subject matching any
// of patterns, until the returned function is called.
func (c *Conn) OnViolation(patterns []string, cancel context.CancelCauseFunc) (stop func()) {
	c.mu.Lock()
	id := c.nextID
	c.nextID++
	c.guards[id] = guard{patterns: patterns, cancel: cancel}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.guards, id)
		c.mu.Unlock()
	}
}

// onAsyncError fails the guarded operations a permission violation hits.
func (c *Conn) onAsyncError(_ *nats.Conn, _ *nats.Subscription, err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return
	}
	m := publishViolation.FindStringSubmatch(err.Error())
	if m == nil {
		return
	}
	subject := m[1]
	denied := fmt.Errorf("%w: publish to %q", ErrPermissionDenied, subject)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.guards {
		for _, p := range g.patterns {
			if server.SubjectMatchesFilter(subject, p) {
				g.cancel(denied)
				break
			}
		}
	}
}
