// Package streams ensures the JetStream work-queue stream and durable
// consumer of each component, correcting drift in place and never losing
// a consumer's position unless asked to.
package streams

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/deadletter"
)

// ErrDrift is what every *DriftError is.
var ErrDrift = errors.New("config drift cannot be corrected")

// DriftError reports a stream or consumer whose live config differs from
// the desired one in a way the server refused to update (or, for a
// consumer, that only deleting it would fix).
type DriftError struct {
	Object string // "stream/NAME" or "consumer/STREAM/NAME"
	Diffs  []bus.ConfigDiff
	Err    error
}

// Error names the object, the drift and the server's refusal.
func (e *DriftError) Error() string {
	msg := fmt.Sprintf("bus: %s drifted and cannot be updated in place: %s", e.Object, bus.JoinDiffs(e.Diffs))
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes the error match ErrDrift.
func (e *DriftError) Is(target error) bool { return target == ErrDrift }

// Unwrap returns the server's refusal.
func (e *DriftError) Unwrap() error { return e.Err }

// EnsureResult says what EnsureStreamAndConsumer did to each object.
type EnsureResult struct {
	Stream   action.Action
	Consumer action.Action
	// Fingerprint is the stream's live config as the server reported it
	// once ensured (its Fingerprint; 0 when it did not say).
	Fingerprint uint64
}

// EnsureOptions tune EnsureStreamAndConsumer.
type EnsureOptions struct {
	// RecreateConsumer allows deleting and re-creating a durable consumer
	// whose drift the server refuses to update in place. The consumer's
	// position (acknowledged and pending messages) is lost. Off by default:
	// such drift is reported as a *DriftError instead.
	RecreateConsumer bool
	// LikelyAbsent says the caller believes the stream does not exist yet
	// (its component was never reconciled here): the stream is created
	// without a lookup first, and looked up only when the name is taken.
	// That saves a round trip per new component; a stream (and its
	// consumer) that did exist with the same configuration is then
	// reported Created.
	LikelyAbsent bool
}

// DefaultMaxInFlight bounds concurrent JetStream API calls when New is given no bound.
const DefaultMaxInFlight = 8

// Manager ensures and deletes the work-queue streams and durable
// consumers of components. At most a fixed number of its JetStream API
// calls are in flight at once, across all goroutines using it.
type Manager struct {
	api  jsAPI
	sem  chan struct{}
	dead *deadletter.Queues
}

// New returns a Manager on c that allows maxInFlight
// concurrent JetStream API calls (DefaultMaxInFlight when <= 0).
func New(c *bus.Conn, maxInFlight int) *Manager {
	m := newManager(connAPI{c: c, js: c.JetStream(), prefix: strings.TrimSuffix(jetstream.DefaultAPIPrefix, ".")}, maxInFlight)
	m.dead = deadletter.New(c)
	return m
}

// NewPrefixed is New for the JetStream API another account exports and
// c's account imports under apiPrefix (such as "tinyctl.ns.media.API"):
// the streams it manages live in that account, whose dead-letter subjects
// (api/deadletter.Subjects) c's account imports as deadLetters. It fails
// on a prefix the client refuses.
func NewPrefixed(c *bus.Conn, apiPrefix, deadLetters string, maxInFlight int) (*Manager, error) {
	js, err := jetstream.NewWithAPIPrefix(c.NATS(), apiPrefix)
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream at %s: %w", apiPrefix, err)
	}
	m := newManager(connAPI{c: c, js: js, prefix: apiPrefix}, maxInFlight)
	m.dead = deadletter.NewPrefixed(c, apiPrefix, deadLetters)
	return m, nil
}

// DeadLetters moves, lists and replays the dead jobs of the streams m
// manages (nil for a Manager made in a test without a connection).
func (m *Manager) DeadLetters() *deadletter.Queues { return m.dead }

// EnsureDeadLetters makes dead-letter stream cfg of work-queue stream work
// exist as configured and moves into it every job of work whose
// max-deliveries advisory (of consumer) it holds; it says what it did to
// the stream and how many jobs it moved.
func (m *Manager) EnsureDeadLetters(ctx context.Context, cfg jetstream.StreamConfig, work, consumer string) (action.Action, int, error) {
	a, _, err := m.ensureStream(ctx, cfg, false)
	if err != nil || m.dead == nil {
		return a, 0, err
	}
	var moved int
	err = m.call(ctx, func(ctx context.Context) (err error) {
		moved, err = m.dead.Sweep(ctx, work, consumer)
		return err
	})
	if err != nil {
		return a, moved, fmt.Errorf("bus: move dead jobs of stream/%s: %w", work, err)
	}
	return a, moved, nil
}

func newManager(api jsAPI, maxInFlight int) *Manager {
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxInFlight
	}
	return &Manager{api: api, sem: make(chan struct{}, maxInFlight)}
}

// call runs one API call once a slot is free.
func (m *Manager) call(ctx context.Context, fn func(context.Context) error) error {
	select {
	case m.sem <- struct{}{}:
	case <-ctx.Done():
		return &bus.TransientError{Op: "wait for a jetstream api slot", Err: ctx.Err()}
	}
	defer func() { <-m.sem }()
	return fn(ctx)
}

// EnsureStreamAndConsumer makes the stream sc and the durable consumer cc
// (named by cc.Durable or cc.Name, on stream sc.Name) exist as configured,
// and says what it did. Each object is looked up first and created only
// when the lookup says it does not exist; a failed lookup is a
// *TransientError, never taken for "exists". The consumer of a stream just
// created, and a stream opts.LikelyAbsent, are created without a lookup,
// which happens only if the name is taken. Drift is updated in place;
// what the server refuses to update is a *DriftError (a consumer is
// re-created instead only with opts.RecreateConsumer).
func (m *Manager) EnsureStreamAndConsumer(ctx context.Context, sc jetstream.StreamConfig,
	cc jetstream.ConsumerConfig, opts EnsureOptions) (EnsureResult, error) {
	var res EnsureResult
	var err error
	if res.Stream, res.Fingerprint, err = m.ensureStream(ctx, sc, opts.LikelyAbsent); err != nil {
		return res, err
	}
	res.Consumer, err = m.ensureConsumer(ctx, sc.Name, cc, opts, res.Stream == action.Created)
	return res, err
}

// EnsureStream makes stream cfg exist as configured; see
// EnsureStreamAndConsumer.
func (m *Manager) EnsureStream(ctx context.Context, cfg jetstream.StreamConfig) (action.Action, error) {
	a, _, err := m.ensureStream(ctx, cfg, false)
	return a, err
}

func (m *Manager) ensureStream(ctx context.Context, cfg jetstream.StreamConfig, createFirst bool) (action.Action, uint64, error) {
	object := "stream/" + cfg.Name
	create := func() (action.Action, uint64, error) {
		var info *jetstream.StreamInfo
		err := m.call(ctx, func(ctx context.Context) (err error) { info, err = m.api.CreateStream(ctx, cfg); return err })
		if err != nil {
			return "", 0, err
		}
		return action.Created, fingerprintOf(info), nil
	}
	if createFirst {
		a, fp, err := create()
		if err == nil {
			return a, fp, nil
		}
		if !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return "", 0, writeFailure("create "+object, err)
		}
	}
	var have *jetstream.StreamInfo
	err := m.call(ctx, func(ctx context.Context) (err error) {
		have, err = m.api.StreamInfo(ctx, cfg.Name)
		return err
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		a, fp, err := create()
		if err != nil {
			return "", 0, writeFailure("create "+object, err)
		}
		return a, fp, nil
	}
	if err != nil {
		return "", 0, lookupFailure("look up "+object, err)
	}
	diffs := streamDiffs(cfg, have.Config)
	if len(diffs) == 0 {
		return action.Unchanged, fingerprintOf(have), nil
	}
	var now *jetstream.StreamInfo
	if err := m.call(ctx, func(ctx context.Context) (err error) { now, err = m.api.UpdateStream(ctx, cfg); return err }); err != nil {
		if bus.IsTransient(err) {
			return "", 0, &bus.TransientError{Op: "update " + object, Err: err}
		}
		return "", 0, &DriftError{Object: object, Diffs: diffs, Err: err}
	}
	return action.Configured, fingerprintOf(now), nil
}

// fingerprintOf is the Fingerprint of info's config, 0 without one.
func fingerprintOf(info *jetstream.StreamInfo) uint64 {
	if info == nil {
		return 0
	}
	return Fingerprint(info.Config)
}

// EnsureConsumer makes durable consumer cfg exist on stream as
// configured; see EnsureStreamAndConsumer.
func (m *Manager) EnsureConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig, opts EnsureOptions) (action.Action, error) {
	return m.ensureConsumer(ctx, stream, cfg, opts, false)
}

func (m *Manager) ensureConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig, opts EnsureOptions, createFirst bool) (action.Action, error) {
	name := consumerName(cfg)
	if name == "" {
		return "", errors.New("bus: consumer config needs a durable name")
	}
	object := "consumer/" + stream + "/" + name
	if createFirst {
		err := m.createConsumer(ctx, stream, cfg)
		if err == nil {
			return action.Created, nil
		}
		if !errors.Is(err, jetstream.ErrConsumerExists) {
			return "", writeFailure("create "+object, err)
		}
	}
	var have *jetstream.ConsumerInfo
	err := m.call(ctx, func(ctx context.Context) (err error) {
		have, err = m.api.ConsumerInfo(ctx, stream, name)
		return err
	})
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		if err := m.createConsumer(ctx, stream, cfg); err != nil {
			return "", writeFailure("create "+object, err)
		}
		return action.Created, nil
	}
	if err != nil {
		return "", lookupFailure("look up "+object, err)
	}
	diffs := consumerDiffs(cfg, have.Config)
	if len(diffs) == 0 {
		return action.Unchanged, nil
	}
	err = m.call(ctx, func(ctx context.Context) error { return m.api.UpdateConsumer(ctx, stream, cfg) })
	switch {
	case err == nil:
		return action.Configured, nil
	case bus.IsTransient(err):
		return "", &bus.TransientError{Op: "update " + object, Err: err}
	case !opts.RecreateConsumer:
		return "", &DriftError{Object: object, Diffs: diffs, Err: err}
	}
	return m.recreateConsumer(ctx, object, stream, cfg)
}

// recreateConsumer deletes and creates a consumer; only on request.
func (m *Manager) recreateConsumer(ctx context.Context, object, stream string, cfg jetstream.ConsumerConfig) (action.Action, error) {
	err := m.call(ctx, func(ctx context.Context) error { return m.api.DeleteConsumer(ctx, stream, consumerName(cfg)) })
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return "", writeFailure("delete "+object, err)
	}
	if err := m.createConsumer(ctx, stream, cfg); err != nil {
		return "", writeFailure("re-create "+object, err)
	}
	return action.Recreated, nil
}

func (m *Manager) createConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error {
	return m.call(ctx, func(ctx context.Context) error { return m.api.CreateConsumer(ctx, stream, cfg) })
}

// Delete removes a stream, its messages and its consumers. It says
// action.Deleted, or action.Absent when there was no such stream. Whether a
// deleted component's stream goes is the caller's decision (its
// deletion.stream); this never decides it.
func (m *Manager) Delete(ctx context.Context, stream string) (action.Action, error) {
	err := m.call(ctx, func(ctx context.Context) error { return m.api.DeleteStream(ctx, stream) })
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return action.Absent, nil
	case err != nil:
		return "", writeFailure("delete stream/"+stream, err)
	}
	return action.Deleted, nil
}

func consumerName(cfg jetstream.ConsumerConfig) string { return cmp.Or(cfg.Durable, cfg.Name) }

// Names lists the names of every stream in the connection's account (one
// paged JetStream API call per 1024 streams). A failed listing is a
// *bus.TransientError.
func (m *Manager) Names(ctx context.Context) ([]string, error) {
	var names []string
	err := m.call(ctx, func(ctx context.Context) (err error) {
		names, err = m.api.StreamNames(ctx)
		return err
	})
	if err != nil {
		return nil, &bus.TransientError{Op: "list streams", Err: err}
	}
	return names, nil
}

// lookupFailure classifies a failed lookup that was not "not found": it is
// transient unless permissions forbid it.
func lookupFailure(op string, err error) error {
	if errors.Is(err, bus.ErrPermissionDenied) {
		return fmt.Errorf("bus: %s: %w", op, err)
	}
	return &bus.TransientError{Op: op, Err: err}
}

// writeFailure classifies a failed create, update or delete.
func writeFailure(op string, err error) error {
	if bus.IsTransient(err) {
		return &bus.TransientError{Op: op, Err: err}
	}
	return fmt.Errorf("bus: %s: %w", op, err)
}
