package apply

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api/action"
)

// SetOptions tune ApplyAll.
type SetOptions struct {
	// Live returns an object's live metadata when a cache has it (see
	// KnownLive), or nil and ok when it is known not to exist; a nil
	// function, or ok false, reads it from the API server.
	Live func(*unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool)
	// Options apply to every object (Owned, say).
	Options []Option
}

// ApplyAll applies objs in order and returns what it did to each. An
// object whose kind is not installed does not stop the others: it is
// left out of the change set and the returned error wraps
// ErrKindNotInstalled once the rest is applied. Any other failure stops at
// that object; the change set then ends with its Result (action Failed or
// Skipped) so callers can report it.
func (m *Manager) ApplyAll(ctx context.Context, objs []*unstructured.Unstructured, o SetOptions) (ChangeSet, error) {
	var cs ChangeSet
	var waiting error
	for _, obj := range objs {
		opts := o.Options
		if o.Live != nil {
			if live, ok := o.Live(obj); ok && live != nil {
				opts = append(opts[:len(opts):len(opts)], KnownLive(live))
			} else if ok {
				opts = append(opts[:len(opts):len(opts)], knownAbsent())
			}
		}
		res, err := m.Apply(ctx, obj, opts...)
		if errors.Is(err, ErrKindNotInstalled) {
			waiting = err
			continue
		}
		if err != nil && res.Action == "" {
			res.Action = action.Failed
		}
		cs = append(cs, res)
		if err != nil {
			return cs, err
		}
	}
	return cs, waiting
}
