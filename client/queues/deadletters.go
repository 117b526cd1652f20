package queues

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/bus"
)

// Dead lists dead jobs of component namespace/name (spec.jobs.deadLetter):
// the jobs that used up their deliveries, asked of the controller of the
// cluster whose broker the connection reaches (a fleet hub has none of
// its members': point the connection at the member's broker).
func (r *Reader) Dead(ctx context.Context, namespace, name string, req deadletter.ListRequest) (deadletter.ListReply, error) {
	var out deadletter.ListReply
	err := r.ask(ctx, deadletter.ListSubject(namespace, name), namespace, name, req, &out)
	return out, answered(err, out.Error)
}

// Replay asks the controller to put dead jobs of component namespace/name
// back on its queue, with their original subjects and headers.
func (r *Reader) Replay(ctx context.Context, namespace, name string, req deadletter.ReplayRequest) (deadletter.ReplayReply, error) {
	var out deadletter.ReplayReply
	err := r.ask(ctx, deadletter.ReplaySubject(namespace, name), namespace, name, req, &out)
	return out, answered(err, out.Error)
}

// answered is err, or the controller's refusal when it answered one.
func answered(err error, refusal string) error {
	if err == nil && refusal != "" {
		return errors.New(refusal)
	}
	return err
}

// ask sends one dead-letter request to the controller and decodes its
// answer.
func (r *Reader) ask(ctx context.Context, subject, namespace, name string, req, out any) error {
	key := api.Key(namespace, name)
	if _, _, err := api.ParseKey(key); err != nil {
		return err
	}
	if r.scope != "" && namespace != r.scope {
		return fmt.Errorf("dead letters of %s: %w (they are scoped to namespace %q)", key, ErrNoAccess, r.scope)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var reply *nats.Msg
	err = r.conn.Guarded(ctx, []string{subject}, func(ctx context.Context) (err error) {
		reply, err = r.conn.NATS().RequestWithContext(ctx, subject, b)
		return err
	})
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("dead letters of %s: no controller answered on this broker (none leads here, or it is older than this CLI)", key)
	case errors.Is(err, bus.ErrPermissionDenied) && r.scope != "":
		return fmt.Errorf("dead letters of %s: these credentials may not ask (minted before they could: mint them again with tinyctl identity publisher %s)", key, r.scope)
	case errors.Is(err, bus.ErrPermissionDenied):
		return fmt.Errorf("dead letters of %s: these credentials may not ask (an admin publisher minted before they could: run tinyctl install again, which mints Secret tinyctl-publisher anew)", key)
	case err != nil:
		return fmt.Errorf("dead letters of %s: %w", key, err)
	}
	if err := json.Unmarshal(reply.Data, out); err != nil {
		return fmt.Errorf("dead letters of %s: the controller's answer: %w", key, err)
	}
	return nil
}
