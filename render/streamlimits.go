package render

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/cluster"
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

// StreamLimits cap every component's stream (see cluster.StreamLimits).
type StreamLimits = cluster.StreamLimits

// checkStreams refuses caps that are neither -1 nor positive, and
// replicas JetStream does not allow.
func checkStreams(l StreamLimits) error {
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
func streamLimits(l StreamLimits, storage jetstream.StorageType, maxBytes, maxMsgs int64) (int64, int64, error) {
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
