package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Action is what an ensure or delete did to one JetStream object.
type Action string

// Actions.
const (
	Created   Action = "created"
	Updated   Action = "updated"
	Unchanged Action = "unchanged"
	Recreated Action = "recreated" // a consumer deleted and created again, only on request
	Deleted   Action = "deleted"
	Retained  Action = "retained"
	Absent    Action = "absent" // nothing to delete
)

// DeletionPolicy says what deleting a component does to its stream. The
// values are those of the component spec (api.Retain, api.Delete).
type DeletionPolicy string

// Deletion policies.
const (
	// DeletionRetain keeps the stream and its durable consumer (and so the
	// consumer's position) when the component is deleted. It is the
	// default.
	DeletionRetain DeletionPolicy = "Retain"
	// DeletionDelete deletes the stream, its messages and its consumers.
	DeletionDelete DeletionPolicy = "Delete"
)

// EnsureResult says what EnsureStreamAndConsumer did to each object.
type EnsureResult struct {
	Stream   Action
	Consumer Action
}

// EnsureOptions tune EnsureStreamAndConsumer.
type EnsureOptions struct {
	// RecreateConsumer allows deleting and re-creating a durable consumer
	// whose drift the server refuses to update in place. The consumer's
	// position (acknowledged and pending messages) is lost. Off by default:
	// such drift is reported as a *DriftError instead.
	RecreateConsumer bool
}

// DefaultMaxInFlight bounds concurrent JetStream API calls when
// NewStreamManager is given no bound.
const DefaultMaxInFlight = 8

// StreamManager ensures and deletes the work-queue streams and durable
// consumers of components. At most a fixed number of its JetStream API
// calls are in flight at once, across all goroutines using it.
type StreamManager struct {
	api jsAPI
	sem chan struct{}
}

// NewStreamManager returns a StreamManager on c that allows maxInFlight
// concurrent JetStream API calls (DefaultMaxInFlight when <= 0).
func NewStreamManager(c *Conn, maxInFlight int) *StreamManager {
	return newStreamManager(connAPI{c: c}, maxInFlight)
}

func newStreamManager(api jsAPI, maxInFlight int) *StreamManager {
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxInFlight
	}
	return &StreamManager{api: api, sem: make(chan struct{}, maxInFlight)}
}

// call runs one API call once a slot is free.
func (m *StreamManager) call(ctx context.Context, fn func(context.Context) error) error {
	select {
	case m.sem <- struct{}{}:
	case <-ctx.Done():
		return &TransientError{Op: "wait for a jetstream api slot", Err: ctx.Err()}
	}
	defer func() { <-m.sem }()
	return fn(ctx)
}

// EnsureStreamAndConsumer makes the stream sc and the durable consumer cc
// (named by cc.Durable or cc.Name, on stream sc.Name) exist as configured,
// and says what it did. Each object is looked up first and created only
// when the lookup says it does not exist; a failed lookup is a
// *TransientError, never taken for "exists". Drift is updated in place;
// what the server refuses to update is a *DriftError (a consumer is
// re-created instead only with opts.RecreateConsumer).
func (m *StreamManager) EnsureStreamAndConsumer(ctx context.Context, sc jetstream.StreamConfig,
	cc jetstream.ConsumerConfig, opts EnsureOptions) (EnsureResult, error) {
	var res EnsureResult
	var err error
	if res.Stream, err = m.EnsureStream(ctx, sc); err != nil {
		return res, err
	}
	res.Consumer, err = m.EnsureConsumer(ctx, sc.Name, cc, opts)
	return res, err
}

// EnsureStream makes stream cfg exist as configured; see
// EnsureStreamAndConsumer.
func (m *StreamManager) EnsureStream(ctx context.Context, cfg jetstream.StreamConfig) (Action, error) {
	object := "stream/" + cfg.Name
	var have *jetstream.StreamInfo
	err := m.call(ctx, func(ctx context.Context) (err error) {
		have, err = m.api.StreamInfo(ctx, cfg.Name)
		return err
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if err := m.call(ctx, func(ctx context.Context) error { return m.api.CreateStream(ctx, cfg) }); err != nil {
			return "", writeFailure("create "+object, err)
		}
		return Created, nil
	}
	if err != nil {
		return "", lookupFailure("look up "+object, err)
	}
	diffs := streamDiffs(cfg, have.Config)
	if len(diffs) == 0 {
		return Unchanged, nil
	}
	if err := m.call(ctx, func(ctx context.Context) error { return m.api.UpdateStream(ctx, cfg) }); err != nil {
		if IsTransient(err) {
			return "", &TransientError{Op: "update " + object, Err: err}
		}
		return "", &DriftError{Object: object, Diffs: diffs, Err: err}
	}
	return Updated, nil
}

// EnsureConsumer makes durable consumer cfg exist on stream as
// configured; see EnsureStreamAndConsumer.
func (m *StreamManager) EnsureConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig, opts EnsureOptions) (Action, error) {
	name := consumerName(cfg)
	if name == "" {
		return "", errors.New("bus: consumer config needs a durable name")
	}
	object := "consumer/" + stream + "/" + name
	var have *jetstream.ConsumerInfo
	err := m.call(ctx, func(ctx context.Context) (err error) {
		have, err = m.api.ConsumerInfo(ctx, stream, name)
		return err
	})
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		if err := m.createConsumer(ctx, stream, cfg); err != nil {
			return "", writeFailure("create "+object, err)
		}
		return Created, nil
	}
	if err != nil {
		return "", lookupFailure("look up "+object, err)
	}
	diffs := consumerDiffs(cfg, have.Config)
	if len(diffs) == 0 {
		return Unchanged, nil
	}
	err = m.call(ctx, func(ctx context.Context) error { return m.api.UpdateConsumer(ctx, stream, cfg) })
	switch {
	case err == nil:
		return Updated, nil
	case IsTransient(err):
		return "", &TransientError{Op: "update " + object, Err: err}
	case !opts.RecreateConsumer:
		return "", &DriftError{Object: object, Diffs: diffs, Err: err}
	}
	return m.recreateConsumer(ctx, object, stream, cfg)
}

// recreateConsumer deletes and creates a consumer; only on request.
func (m *StreamManager) recreateConsumer(ctx context.Context, object, stream string, cfg jetstream.ConsumerConfig) (Action, error) {
	err := m.call(ctx, func(ctx context.Context) error { return m.api.DeleteConsumer(ctx, stream, consumerName(cfg)) })
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return "", writeFailure("delete "+object, err)
	}
	if err := m.createConsumer(ctx, stream, cfg); err != nil {
		return "", writeFailure("re-create "+object, err)
	}
	return Recreated, nil
}

func (m *StreamManager) createConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error {
	return m.call(ctx, func(ctx context.Context) error { return m.api.CreateConsumer(ctx, stream, cfg) })
}

// Delete removes what policy says a deleted component leaves behind:
// with DeletionDelete the stream (and with it its consumers), with
// DeletionRetain (or "") nothing. It says what happened to the stream.
func (m *StreamManager) Delete(ctx context.Context, stream string, policy DeletionPolicy) (Action, error) {
	switch policy {
	case DeletionRetain, "":
		return Retained, nil
	case DeletionDelete:
	default:
		return "", fmt.Errorf("bus: unknown deletion policy %q", policy)
	}
	err := m.call(ctx, func(ctx context.Context) error { return m.api.DeleteStream(ctx, stream) })
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return Absent, nil
	case err != nil:
		return "", writeFailure("delete stream/"+stream, err)
	}
	return Deleted, nil
}

func consumerName(cfg jetstream.ConsumerConfig) string { return orDefault(cfg.Durable, cfg.Name) }

// lookupFailure classifies a failed lookup that was not "not found": it is
// transient unless permissions forbid it.
func lookupFailure(op string, err error) error {
	if errors.Is(err, ErrPermissionDenied) {
		return fmt.Errorf("bus: %s: %w", op, err)
	}
	return &TransientError{Op: op, Err: err}
}

// writeFailure classifies a failed create, update or delete.
func writeFailure(op string, err error) error {
	if IsTransient(err) {
		return &TransientError{Op: op, Err: err}
	}
	return fmt.Errorf("bus: %s: %w", op, err)
}
