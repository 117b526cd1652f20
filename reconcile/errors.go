package reconcile

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/streams"
)

// Class says how the loop treats a failed reconcile.
type Class int

// Classes, in the order a joined error picks them: a failure that may
// pass if retried decides over one that waits, which decides over one
// that only a new revision can fix (so a status write that failed
// transiently next to an invalid spec is retried, and the Stalled status
// is eventually written).
const (
	// Transient failures retry with capped exponential backoff.
	Transient Class = iota
	// Waiting failures apply what they can and re-check after a period.
	Waiting
	// Permanent failures stall the component until a new revision arrives.
	Permanent
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
// condition reports for it. Errors joined in err (errors.Join) are
// classified one by one and the most retry-worthy class wins; an error
// that says itself what it is (an invalid component, an explicit class)
// is not split.
func Classify(err error) (Class, string) {
	for e := err; e != nil; {
		if c, ok := e.(*classified); ok {
			return c.class, c.reason
		}
		if is, ok := e.(interface{ Is(error) bool }); ok && is.Is(api.ErrInvalid) {
			return Permanent, reasons.InvalidSpec
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			// fmt.Errorf("...: %w: %w", api.ErrInvalid, cause) says what it
			// is: its cause explains the invalid component, it is not a
			// second failure to retry.
			if slices.Contains(j.Unwrap(), api.ErrInvalid) {
				return Permanent, reasons.InvalidSpec
			}
			return classifyJoined(j.Unwrap())
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return classifyOne(err)
}

// classifyJoined picks the most retry-worthy class of errs, with the
// reason of the first error of that class.
func classifyJoined(errs []error) (Class, string) {
	best, reason := Permanent, ""
	for _, e := range errs {
		if class, r := Classify(e); reason == "" || class < best {
			best, reason = class, r
		}
	}
	if reason == "" {
		return Transient, reasons.Retrying
	}
	return best, reason
}

func classifyOne(err error) (Class, string) {
	switch {
	case errors.Is(err, api.ErrInvalid):
		return Permanent, reasons.InvalidSpec
	case apply.IsPermanent(err):
		return Permanent, reasons.Rejected
	case errors.Is(err, apply.ErrKindNotInstalled):
		return Waiting, reasons.KindNotInstalled
	case errors.Is(err, ErrKindForbidden):
		return Waiting, reasons.KindForbidden
	case errors.Is(err, apply.ErrNotOwned):
		return Waiting, reasons.Conflict
	case errors.Is(err, ErrNamespaceMissing):
		return Waiting, reasons.NamespaceMissing
	case errors.Is(err, apply.ErrFenced):
		// Deposed: the lease is lost, or about to be, and the loop stops
		// with it; until then the key waits rather than being retried hot.
		return Waiting, reasons.Fenced
	case errors.Is(err, bus.ErrPermissionDenied) || apierrors.IsForbidden(err):
		// NATS, or the API server: a namespace made after an
		// all-namespaces install has no grant until install runs again.
		return Waiting, reasons.PermissionDenied
	case errors.Is(err, streams.ErrDrift):
		return Permanent, reasons.ConsumerDrift
	case isRejectedByJetStream(err):
		return Permanent, reasons.StreamRejected
	}
	return Transient, reasons.Retrying
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

func isNotFound(err error) bool { return errors.Is(err, bus.ErrNotFound) }
