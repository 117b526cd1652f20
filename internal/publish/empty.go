package publish

import (
	"context"
	"errors"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// errReadOnly is returned by EmptyStore's writes.
var errReadOnly = errors.New("publish: the empty store accepts no writes")

// EmptyStore is a Store without keys that refuses writes: what a dry run
// compares with when the spec bucket does not exist yet.
type EmptyStore struct{}

// Get always returns bus.ErrNotFound.
func (EmptyStore) Get(context.Context, string) (kv.Entry, error) {
	return kv.Entry{}, bus.ErrNotFound
}

// Put refuses.
func (EmptyStore) Put(context.Context, string, []byte) (uint64, error) { return 0, errReadOnly }

// Create refuses.
func (EmptyStore) Create(context.Context, string, []byte) (uint64, error) { return 0, errReadOnly }

// Update refuses.
func (EmptyStore) Update(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, errReadOnly
}
