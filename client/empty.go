package client

import (
	"context"
	"errors"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// errReadOnly is returned by emptyStore's writes.
var errReadOnly = errors.New("publish: the empty store accepts no writes")

// emptyStore is a store without keys that refuses writes: what a dry run
// compares with when the spec bucket does not exist yet.
type emptyStore struct{}

// Get always returns bus.ErrNotFound.
func (emptyStore) Get(context.Context, string) (kv.Entry, error) {
	return kv.Entry{}, bus.ErrNotFound
}

// Put refuses.
func (emptyStore) Put(context.Context, string, []byte) (uint64, error) { return 0, errReadOnly }

// Create refuses.
func (emptyStore) Create(context.Context, string, []byte) (uint64, error) { return 0, errReadOnly }

// Update refuses.
func (emptyStore) Update(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, errReadOnly
}
