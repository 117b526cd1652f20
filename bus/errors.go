package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Sentinel errors. Test for them with errors.Is; the bus packages always
// return them wrapped with the operation ("bus: put ns.name: ...").
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
// the server has (a bucket's, a stream's or a consumer's).
type ConfigDiff struct {
	Field string
	Want  string
	Have  string
}

// String renders the diff as "field: want W, have H".
func (d ConfigDiff) String() string {
	return fmt.Sprintf("%s: want %s, have %s", d.Field, d.Want, d.Have)
}

// JoinDiffs renders diffs as "a: want x, have y; b: ...".
func JoinDiffs(diffs []ConfigDiff) string {
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
		nats.ErrConnectionReconnecting, nats.ErrDisconnected, nats.ErrReconnectBufExceeded,
		nats.ErrNoServers, jetstream.ErrNoHeartbeat, jetstream.ErrJetStreamNotEnabled,
		jetstream.ErrJetStreamNotEnabledForAccount,
		// A stream with no leader yet (a JetStream cluster electing one
		// after a node died) does not answer a publish.
		jetstream.ErrNoStreamResponse,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && IsTransientAPIError(apiErr)
}

// transientAPIErrors are the JetStream API errors that mean "not now"
// rather than "not ever": the system or a peer is unavailable, not leader,
// offline or still recovering, or the server or account is out of room
// (storage, memory, stream or consumer count), which frees up when other
// streams shrink or go. Other errors (such as a refused config update, or
// a stream asking for more than the account's per-stream byte limit,
// which no amount of waiting grants) are permanent.
var transientAPIErrors = []server.ErrorIdentifier{
	server.JSAccountResourcesExceededErr,
	server.JSStorageResourcesExceededErr,
	server.JSMemoryResourcesExceededErr,
	server.JSMaximumStreamsLimitErr,
	server.JSMaximumConsumersLimitErr,
	server.JSClusterIncompleteErr,
	// no suitable peers for placement: a JetStream cluster still forming,
	// or with a node down, has too few current peers for the replicas
	server.JSClusterNoPeersErrF,
	server.JSClusterNotAssignedErr,
	server.JSClusterNotAvailErr,
	server.JSClusterNotLeaderErr,
	server.JSInsufficientResourcesErr,
	server.JSNotEnabledForAccountErr,
	server.JSRaftGeneralErrF,
	// a generic creation failure, e.g. the store of a just-deleted stream
	// still being removed
	server.JSStreamCreateErrF,
	server.JSStreamSequenceNotMatchErr,
	server.JSPeerRemapErr,
	server.JSNotEnabledErr,
	server.JSStreamOfflineErr,
	server.JSConsumerOfflineErr,
	server.JSStreamExpectedLastSeqPerSubjectNotReady,
	server.JSStreamOfflineReasonErrF,
	server.JSConsumerOfflineReasonErrF,
}

// IsTransientAPIError reports whether a JetStream API error is one that
// retrying may fix (see transientAPIErrors).
func IsTransientAPIError(e *jetstream.APIError) bool {
	return IsAPIError(e, transientAPIErrors...)
}

// IsOutOfRoom reports a JetStream refusal for lack of room: the server's
// store or memory, or the account's quota, cannot hold what was asked (a
// stream's byte limit is set aside from both when the stream is created),
// or the account got no JetStream at all because its quota did not fit
// the server. It frees up when other streams shrink or go.
func IsOutOfRoom(err error) bool {
	if errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && IsAPIError(apiErr, server.JSStorageResourcesExceededErr,
		server.JSMemoryResourcesExceededErr, server.JSAccountResourcesExceededErr,
		server.JSInsufficientResourcesErr, server.JSNotEnabledForAccountErr)
}

// IsAPIError reports whether e carries the error code of one of ids, the
// server's names for its JetStream errors.
func IsAPIError(e *jetstream.APIError, ids ...server.ErrorIdentifier) bool {
	if e == nil {
		return false
	}
	for _, id := range ids {
		if ae, ok := server.ApiErrors[id]; ok && uint16(e.ErrorCode) == ae.ErrCode {
			return true
		}
	}
	return false
}

// Classify maps a client-library error from op to the bus errors:
// not-found to ErrNotFound, retryable causes to *TransientError. Other
// errors are wrapped with op and returned; nil stays nil.
func Classify(op string, err error) error {
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
