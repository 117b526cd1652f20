package reconcile

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/streams"
)

// Class says how the loop treats a failed reconcile.
type Class int

// Classes.
const (
	// Transient failures retry with capped exponential backoff.
	Transient Class = iota
	// Permanent failures stall the component until a new revision arrives.
	Permanent
	// Waiting failures apply what they can and re-check after a period.
	Waiting
)

func (c Class) String() string {
	switch c {
	case Permanent:
		return "permanent"
	case Waiting:
		return "waiting"
	default:
		return "transient"
	}
}

// ErrNamespaceMissing means the component's target namespace does not exist
// and the controller is not allowed to create it.
var ErrNamespaceMissing = errors.New("target namespace does not exist")

// classified carries an explicit class through wrapping.
type classified struct {
	class  Class
	reason string
	err    error
}

func (c *classified) Error() string { return c.err.Error() }
func (c *classified) Unwrap() error { return c.err }

// withClass marks err with a class and a status reason (CamelCase).
func withClass(class Class, reason string, err error) error {
	if err == nil {
		return nil
	}
	return &classified{class: class, reason: reason, err: err}
}

// Classify returns how the loop should treat err and the reason a status
// condition reports for it.
func Classify(err error) (Class, string) {
	var c *classified
	if errors.As(err, &c) {
		return c.class, c.reason
	}
	switch {
	case errors.Is(err, api.ErrInvalid):
		return Permanent, "InvalidSpec"
	case apply.IsPermanent(err):
		return Permanent, "Rejected"
	case errors.Is(err, apply.ErrKindNotInstalled):
		return Waiting, "KindNotInstalled"
	case errors.Is(err, ErrNamespaceMissing):
		return Waiting, "NamespaceMissing"
	case errors.Is(err, bus.ErrPermissionDenied):
		return Waiting, "PermissionDenied"
	case errors.Is(err, streams.ErrDrift):
		return Permanent, "ConsumerDrift"
	case isRejectedByJetStream(err):
		return Permanent, "StreamRejected"
	}
	return Transient, "Retrying"
}

// stepError names the step of the chain that failed.
func stepError(step string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", step, err)
}

// isRejectedByJetStream reports a JetStream API error that retrying the
// same config cannot fix (replicas above the cluster size, subjects that
// overlap another stream, an invalid config).
func isRejectedByJetStream(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && !bus.IsTransient(err)
}
