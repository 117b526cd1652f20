package client

import (
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// Operations a Revision records.
const (
	opPut    = "put"
	opDelete = "delete"
	opPurge  = "purge"
)

// Revision is one revision of a component in the spec bucket: a value, or
// a delete or purge marker.
type Revision struct {
	// Key is the component's spec key, "<namespace>.<name>".
	Key string
	// Revision is the bucket's revision of the write.
	Revision uint64
	// Created is the server's time of the write.
	Created time.Time
	// Deleted reports a marker: the component was deleted at this revision.
	Deleted bool
	// Operation says which write it was: "put" for a value, "delete" or
	// "purge" for a marker (a purge also erased the component's history).
	Operation string
	// Value is the value as stored (a put's only).
	Value []byte
	// Component is Value decoded, and Err why it does not decode; both are
	// zero for a marker.
	Component api.Component
	Err       error
}

// revisionOf decodes a bucket entry.
func revisionOf(e kv.Entry) Revision {
	r := Revision{Key: e.Key, Revision: e.Revision, Created: e.Created, Operation: opPut}
	switch e.Op {
	case kv.OpDelete:
		r.Operation, r.Deleted = opDelete, true
	case kv.OpPurge:
		r.Operation, r.Deleted = opPurge, true
	default:
		r.Value = e.Value
		r.Component, r.Err = decode.Component(e.Value)
	}
	return r
}

func revisionsOf(es []kv.Entry) []Revision {
	out := make([]Revision, len(es))
	for i, e := range es {
		out[i] = revisionOf(e)
	}
	return out
}
