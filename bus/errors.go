package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Sentinel errors. Test for them with errors.Is; this package always
// returns them wrapped with the operation ("bus: put ns.name: ...").
var (
	// ErrNotFound means the key, stream or consumer does not exist (a KV key
	// whose latest revision is a delete or purge marker counts as missing).
	ErrNotFound = errors.New("not found")
	// ErrExists means a Create found the key already present.
	ErrExists = errors.New("already exists")
	// ErrRevisionMismatch is what every *RevisionMismatchError is.
	ErrRevisionMismatch = errors.New("revision mismatch")
	// ErrPermissionDenied means the server refused the operation for this
	// identity's permissions. Retrying cannot fix it.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrAuthentication means the server refused the credentials, or the
	// TLS handshake failed. Retrying with the same config cannot fix it.
	ErrAuthentication = errors.New("authentication failed")
	// ErrLeaseHeld means another holder owns a live lease.
	ErrLeaseHeld = errors.New("lease held by another holder")
	// ErrLeaseLost means a held lease was taken over, deleted, or not
	// renewed in time.
	ErrLeaseLost = errors.New("lease lost")
	// ErrBucketConfig is what every *BucketConfigError is.
	ErrBucketConfig = errors.New("bucket exists with other settings")
	// ErrDrift is what every *DriftError is.
	ErrDrift = errors.New("config drift cannot be corrected")
)

// RevisionMismatchError says a revision-checked write lost: the key was
// at revision Current, not Expected. Expected 0 means the write required
// the key to be absent (Create); Current 0 means it is absent.
type RevisionMismatchError struct {
	Key      string
	Expected uint64
	Current  uint64
}

// Error names the key and both revisions.
func (e *RevisionMismatchError) Error() string {
	return fmt.Sprintf("bus: key %q: expected revision %d, current revision %d", e.Key, e.Expected, e.Current)
}

// Is makes the error match ErrRevisionMismatch, and ErrExists when the
// write required the key to be absent.
func (e *RevisionMismatchError) Is(target error) bool {
	return target == ErrRevisionMismatch || (target == ErrExists && e.Expected == 0)
}

// ConfigDiff is one setting that differs between what was asked and what
// the server has.
type ConfigDiff struct {
	Field string
	Want  string
	Have  string
}

// String renders the diff as "field: want W, have H".
func (d ConfigDiff) String() string {
	return fmt.Sprintf("%s: want %s, have %s", d.Field, d.Want, d.Have)
}

// BucketConfigError reports a KV bucket that exists with settings other
// than the configured ones. The bucket is left as it is.
type BucketConfigError struct {
	Bucket string
	Diffs  []ConfigDiff
}

// Error names the bucket and every differing setting.
func (e *BucketConfigError) Error() string {
	return fmt.Sprintf("bus: bucket %s exists with other settings: %s", e.Bucket, joinDiffs(e.Diffs))
}

// Is makes the error match ErrBucketConfig.
func (e *BucketConfigError) Is(target error) bool { return target == ErrBucketConfig }

// DriftError reports a stream or consumer whose live config differs from
// the desired one in a way the server refused to update (or, for a
// consumer, that only deleting it would fix).
type DriftError struct {
	Object string // "stream/NAME" or "consumer/STREAM/NAME"
	Diffs  []ConfigDiff
	Err    error
}

// Error names the object, the drift and the server's refusal.
func (e *DriftError) Error() string {
	msg := fmt.Sprintf("bus: %s drifted and cannot be updated in place: %s", e.Object, joinDiffs(e.Diffs))
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is makes the error match ErrDrift.
func (e *DriftError) Is(target error) bool { return target == ErrDrift }

// Unwrap returns the server's refusal.
func (e *DriftError) Unwrap() error { return e.Err }

func joinDiffs(diffs []ConfigDiff) string {
	parts := make([]string, len(diffs))
	for i, d := range diffs {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}

// TransientError marks a failure that retrying may fix: a timeout, a lost
// connection, JetStream briefly unavailable, a failed lookup.
type TransientError struct {
	Op  string
	Err error
}

// Error names the operation and its cause.
func (e *TransientError) Error() string { return fmt.Sprintf("bus: %s (transient): %v", e.Op, e.Err) }

// Unwrap returns the cause.
func (e *TransientError) Unwrap() error { return e.Err }

// IsTransient reports whether err is worth retrying: a *TransientError
// anywhere in its chain, or a timeout or connection error from the client
// library that was not yet classified.
func IsTransient(err error) bool {
	var te *TransientError
	if errors.As(err, &te) {
		return true
	}
	return isTransientCause(err)
}

// isTransientCause recognises the client library's retryable failures.
func isTransientCause(err error) bool {
	for _, target := range []error{
		context.DeadlineExceeded, nats.ErrTimeout, nats.ErrNoResponders,
		nats.ErrConnectionReconnecting, nats.ErrDisconnected,
		nats.ErrNoServers, jetstream.ErrNoHeartbeat, jetstream.ErrJetStreamNotEnabled,
		jetstream.ErrJetStreamNotEnabledForAccount,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && transientAPICode(apiErr.ErrorCode)
}

// transientAPICode reports whether a JetStream API error code means "not
// now" rather than "not ever": the system or a peer is unavailable, not
// leader, offline or still recovering. Other 5xx codes (such as a refused
// config update, 10012 or 10069) are permanent.
func transientAPICode(code jetstream.ErrorCode) bool {
	switch code {
	case 10004, // cluster incomplete results
		10007, // cluster not assigned to this server
		10008, // JetStream system temporarily unavailable
		10009, // cluster can not handle request (not leader)
		10023, // insufficient resources
		10039, // JetStream not enabled for account (yet)
		10041, // raft general error
		10049, // generic stream creation failure, e.g. the store of a just-deleted stream still being removed
		10063, // expected stream sequence does not match
		10075, // peer remap failed
		10076, // JetStream not enabled (yet)
		10118, // stream offline
		10119, // consumer offline
		10163, // expected last sequence per subject temporarily unavailable
		10194, // stream offline (with reason)
		10195: // consumer offline (with reason)
		return true
	}
	return false
}

// classify maps a client-library error from op to this package's errors:
// not-found to ErrNotFound, retryable causes to *TransientError. Other
// errors are wrapped with op and returned.
func classify(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrPermissionDenied), errors.Is(err, ErrNotFound), errors.Is(err, ErrRevisionMismatch):
		return fmt.Errorf("bus: %s: %w", op, err)
	case isNotFound(err):
		return fmt.Errorf("bus: %s: %w: %w", op, ErrNotFound, err)
	case isTransientCause(err):
		return &TransientError{Op: op, Err: err}
	}
	return fmt.Errorf("bus: %s: %w", op, err)
}

func isNotFound(err error) bool {
	for _, target := range []error{
		jetstream.ErrKeyNotFound, jetstream.ErrKeyDeleted, jetstream.ErrStreamNotFound,
		jetstream.ErrConsumerNotFound, jetstream.ErrBucketNotFound, jetstream.ErrMsgNotFound,
		jetstream.ErrNoKeysFound,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
