package render

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Default stream caps of a cluster.
const (
	DefaultStreamMaxBytes       = 64 << 20
	DefaultStreamMaxMemoryBytes = 8 << 20
	DefaultStreamMaxMsgs        = 1_000_000
	// DefaultStreamReplicas suits a single-node broker.
	DefaultStreamReplicas = 1
	// MaxStreamReplicas is the most replicas JetStream allows.
	MaxStreamReplicas = 5
)

// StreamLimits cap the size of every component's stream and give the
// replicas of a stream whose spec sets none. A spec may ask for a limit up
// to the cap; one that asks for more is refused (api.ErrInvalid). -1 means
// no cap; zero fields take the defaults.
//
// A file stream whose spec asks for no byte limit gets none. nats-server
// sets a stream's byte limit aside from its store and from its account's
// quota when the stream is created, full or empty, so a default byte limit
// would decide how many components fit (64 MiB each: 140 in the chart's
// 9 GiB store, 16 in a namespace's 1 GiB quota). Such a stream is bounded
// instead by its namespace's quota (the account's JetStream limit, on a
// broker with accounts per namespace), the messages cap and its maxAge.
// A memory stream, opt-in and drawing on RAM, gets the memory cap.
type StreamLimits struct {
	// MaxBytes is the most a file-backed stream's spec may ask for
	// (default 64 MiB); a spec that asks nothing gets no byte limit.
	MaxBytes int64
	// MaxMemoryBytes caps memory-backed streams (default 8 MiB).
	MaxMemoryBytes int64
	// MaxMsgs caps the messages of any stream (default 1,000,000).
	MaxMsgs int64
	// Replicas is the replica count of a stream whose spec sets none
	// (default 1; a JetStream cluster needs at least that many servers).
	// A spec's own spec.jobs.stream.replicas wins.
	Replicas int
}

// check refuses caps that are neither -1 nor positive, and replicas
// JetStream does not allow.
func (l StreamLimits) check() error {
	var errs []error
	for name, v := range map[string]int64{"max bytes": l.MaxBytes, "max memory bytes": l.MaxMemoryBytes, "max messages": l.MaxMsgs} {
		if v < unlimited {
			errs = append(errs, fmt.Errorf("stream %s cap %d: must be -1 (no cap) or positive", name, v))
		}
	}
	if l.Replicas < 0 || l.Replicas > MaxStreamReplicas {
		errs = append(errs, fmt.Errorf("stream replicas %d: must be between 1 and %d", l.Replicas, MaxStreamReplicas))
	}
	return errors.Join(errs...)
}

// capped returns the limit a stream gets: the spec's (0 for none) within
// the cluster's cap (-1 for none), or an error naming field and flag when
// the spec asks for more than the cap.
func capped(field string, spec, limit int64, flag string) (int64, error) {
	switch {
	case spec <= 0:
		return max(limit, unlimited), nil
	case limit > 0 && spec > limit:
		return 0, fmt.Errorf("%s %d: exceeds this cluster's cap %d (tinyctl serve %s)", field, spec, limit, flag)
	}
	return spec, nil
}

// streamLimits returns MaxBytes and MaxMsgs for a stream of the given
// storage asking for maxBytes and maxMsgs (0: none), within l.
func (l StreamLimits) streamLimits(storage jetstream.StorageType, maxBytes, maxMsgs int64) (int64, int64, error) {
	b, errB := capped("spec.jobs.stream.maxBytes", maxBytes, l.MaxBytes, "--stream-max-bytes")
	if maxBytes <= 0 {
		b = unlimited // nothing set aside; see StreamLimits
	}
	if storage == jetstream.MemoryStorage {
		b, errB = capped("spec.jobs.stream.maxBytes", maxBytes, l.MaxMemoryBytes, "--stream-max-memory-bytes")
	}
	m, errM := capped("spec.jobs.stream.maxMsgs", maxMsgs, l.MaxMsgs, "--stream-max-msgs")
	return b, m, errors.Join(errB, errM)
}
