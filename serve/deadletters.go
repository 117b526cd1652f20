package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/deadletter"
	busdead "github.com/tinyctl/tinyctl/bus/deadletter"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// deadLetterTimeout bounds one list or replay request's work.
const deadLetterTimeout = 30 * time.Second

// serveDeadLetters, while this process leads, wakes the loop for the
// component a max-deliveries advisory names (its reconcile moves the dead
// job) and answers `tinyctl jobs dead|replay` (api/deadletter's
// requests). The returned func stops both.
func (p *Process) serveDeadLetters(ctx context.Context, ctrl *reconcile.Controller) (func(), error) {
	nc := p.conn.NATS()
	advisories := deadletter.AdvisoryPrefix + ".>"
	if p.tenants != nil {
		advisories = identity.NamespaceAdvisories("*") + ".>"
	}
	wake, err := nc.Subscribe(advisories, func(m *nats.Msg) {
		tokens := strings.Split(m.Subject, ".")
		if len(tokens) >= 2 {
			ctrl.WakeDeadLetters(tokens[len(tokens)-2])
		}
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe to max-deliveries advisories: %w", err)
	}
	answer, err := nc.QueueSubscribe(deadletter.Service+".>", "tinyctl-controller", func(m *nats.Msg) {
		reply := p.answerDeadLetters(ctx, m)
		b, _ := json.Marshal(reply)
		if err := m.Respond(b); err != nil {
			zerolog.Ctx(ctx).Warn().Err(err).Str("subject", m.Subject).Msg("answer a dead-letter request")
		}
	})
	if err != nil {
		_ = wake.Unsubscribe()
		return nil, fmt.Errorf("subscribe to dead-letter requests: %w", err)
	}
	return func() { _ = wake.Unsubscribe(); _ = answer.Unsubscribe() }, nil
}

// answerDeadLetters handles one request (Service.<op>.<ns>.<name>).
func (p *Process) answerDeadLetters(ctx context.Context, m *nats.Msg) any {
	tokens := strings.Split(strings.TrimPrefix(m.Subject, deadletter.Service+"."), ".")
	if len(tokens) != 3 {
		return deadletter.ListReply{Error: "unknown request " + m.Subject}
	}
	op, ns, name := tokens[0], tokens[1], tokens[2]
	q, err := p.deadLetterQueues(ns)
	if err != nil {
		return deadletter.ListReply{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, deadLetterTimeout)
	defer cancel()
	work := render.StreamName(ns, name)
	switch op {
	case "list":
		var req deadletter.ListRequest
		if err := json.Unmarshal(m.Data, &req); err != nil && len(m.Data) > 0 {
			return deadletter.ListReply{Error: "bad request: " + err.Error()}
		}
		out, err := q.List(ctx, work, req)
		out.Error = deadLetterError(ns, name, err)
		return out
	case "replay":
		var req deadletter.ReplayRequest
		if err := json.Unmarshal(m.Data, &req); err != nil || (!req.All && len(req.Sequences) == 0) {
			return deadletter.ReplayReply{Error: "bad request: name sequences, or all"}
		}
		out, err := q.Replay(ctx, work, req)
		out.Error = deadLetterError(ns, name, err)
		p.metrics.Replayed(out.Replayed)
		if out.Replayed > 0 {
			zerolog.Ctx(ctx).Info().Str(reconcile.LogKey, api.Key(ns, name)).Int("jobs", out.Replayed).Msg("dead jobs replayed")
		}
		return out
	}
	return deadletter.ListReply{Error: "unknown request " + op}
}

// deadLetterQueues are the dead-letter moves in the account holding ns's
// streams.
func (p *Process) deadLetterQueues(ns string) (*busdead.Queues, error) {
	if p.tenants == nil {
		return p.streams.DeadLetters(), nil
	}
	m, err := p.nsStreams.manager(ns)
	if err != nil {
		return nil, err
	}
	return m.DeadLetters(), nil
}

// deadLetterError is what a requester reads of err ("" for none).
func deadLetterError(ns, name string, err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, busdead.ErrNoStream):
		return fmt.Sprintf("component %s has no dead-letter stream on this cluster: spec.jobs.deadLetter is not set, or it does not run here", api.Key(ns, name))
	}
	return err.Error()
}
