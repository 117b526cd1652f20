package reconcile

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/bus"
)

// withRoomRemedy turns a refusal of stream sc for lack of room into a
// waiting failure whose message says what takes the room and what to
// change; other errors are returned as they are.
func withRoomRemedy(err error, sc jetstream.StreamConfig) error {
	if !bus.IsOutOfRoom(err) {
		return err
	}
	quota, store := "--tenant-store", "max_file_store"
	if sc.Storage == jetstream.MemoryStorage {
		quota, store = "--tenant-memory", "max_memory_store"
	}
	if errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return withClass(Waiting, reasons.InsufficientStorage, fmt.Errorf("%w: the broker could not set the namespace's "+
			"JetStream quota (tinyctl serve %s) aside, the namespaces' quotas together exceeding its %s; lower the quota "+
			"or raise the store (re-checked every --recheck)", err, quota, store))
	}
	what := fmt.Sprintf("the namespace's JetStream quota (tinyctl serve %s) or the broker's store (%s) is full", quota, store)
	if sc.MaxBytes > 0 {
		what = fmt.Sprintf("the stream sets aside its byte limit of %d (spec.jobs.stream.maxBytes) when it is created, "+
			"and the namespace's quota (tinyctl serve %s) or the broker's store (%s) has less left", sc.MaxBytes, quota, store)
	}
	return withClass(Waiting, reasons.InsufficientStorage, fmt.Errorf("%w: %s; free room (remove components or "+
		"their jobs), ask for less, or raise the quota or the store (re-checked every --recheck)", err, what))
}
