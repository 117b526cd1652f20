package kv

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Op is what a KV revision did to its key.
type Op uint8

// KV operations.
const (
	OpPut Op = iota
	OpDelete
	OpPurge
)

// String returns "put", "delete" or "purge".
func (o Op) String() string {
	switch o {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpPurge:
		return "purge"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Entry is one revision of a KV key. Value is empty for delete and purge
// markers. Created is the server's time of the write.
type Entry struct {
	Key      string
	Value    []byte
	Revision uint64
	Created  time.Time
	Op       Op
}

// Headers the KV layer writes and the server adds to markers.
const (
	kvOperationHeader  = "KV-Operation"
	markerReasonHeader = "Nats-Marker-Reason"
)

// opFromHeader reads the operation of a stored KV message.
func opFromHeader(h nats.Header) Op {
	switch h.Get(kvOperationHeader) {
	case "DEL":
		return OpDelete
	case "PURGE":
		return OpPurge
	}
	switch h.Get(markerReasonHeader) {
	case "MaxAge", "Purge":
		return OpPurge
	case "Remove":
		return OpDelete
	}
	return OpPut
}

func entryFromKV(e jetstream.KeyValueEntry) Entry {
	op := OpPut
	switch e.Operation() {
	case jetstream.KeyValueDelete:
		op = OpDelete
	case jetstream.KeyValuePurge:
		op = OpPurge
	}
	return Entry{Key: e.Key(), Value: e.Value(), Revision: e.Revision(), Created: e.Created(), Op: op}
}
