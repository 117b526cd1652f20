package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api/action"
)

// Create makes obj when it does not exist and never changes an existing
// one: the result says Created, or Unchanged when an object of that name
// was already there (whoever made it). An object with
// metadata.generateName and no name always gets a new name; the created
// object is returned so the caller learns it. Use it for objects tinyctl
// must not take over once they exist, such as a namespace.
func (m *Manager) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, Result, error) {
	res := resultFor(obj)
	mapping, err := m.Resource(obj.GroupVersionKind())
	if err != nil {
		return nil, res, fmt.Errorf("%s create failed: %w", res.Ref(), err)
	}
	if err := expired(ctx); err != nil {
		return nil, res, fmt.Errorf("%s create failed: %w", res.Ref(), err)
	}
	out, err := m.client(mapping, obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	switch {
	case apierrors.IsAlreadyExists(err):
		res.Action = action.Unchanged
		return nil, res, nil
	case err != nil:
		res.Action = action.Failed
		return nil, res, fmt.Errorf("%s create failed: %w", res.Ref(), err)
	}
	res.Name, res.Action = out.GetName(), action.Created
	return out, res, nil
}
