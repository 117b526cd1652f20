package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api/action"
)

// Delete removes the object named by gvk, namespace and name, in the
// background (dependents are garbage collected). A missing object is not
// an error: the result says Absent. With Owned, the live object is read
// first and one without the owner's label is left alone (Skipped,
// ErrNotOwned): a delete never removes what tinyctl did not create. With
// Fenced, it is read too, one a newer tenure wrote is left alone
// (ErrFenced), and the delete is made at the version read (a version
// moved on since by someone else's write is read and judged again). A
// delete that could not be made says Failed, never Deleted.
func (m *Manager) Delete(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, opts ...Option) (Result, error) {
	res := Result{Kind: gvk.Kind, Namespace: namespace, Name: name, Action: action.Deleted}
	mapping, err := m.Resource(gvk)
	if err != nil {
		res.Action = action.Failed
		return res, fmt.Errorf("%s delete failed: %w", res.Ref(), err)
	}
	cfg := optionsOf(opts)
	for attempt := 1; ; attempt++ {
		del := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
		if cfg.ownerLabel != "" || cfg.fence != "" {
			live, err := m.metaClient(mapping, namespace).Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				res.Action = action.Absent
				return res, nil
			case err != nil:
				res.Action = action.Failed
				return res, fmt.Errorf("%s delete failed: read live: %w", res.Ref(), err)
			case !cfg.owns(live):
				res.Action = action.Skipped
				return res, fmt.Errorf("%s delete refused: %w", res.Ref(), notOwned(live, cfg))
			}
			if err := cfg.fencedOut(res.Ref(), live); err != nil {
				res.Action = action.Skipped
				return res, err
			}
			// Delete exactly the object that was checked, not one
			// re-created under the name since, and with Fenced, as it was
			// read.
			del.Preconditions = &metav1.Preconditions{UID: &live.UID}
			if cfg.fence != "" {
				del.Preconditions.ResourceVersion = &live.ResourceVersion
			}
		}
		if err := expired(ctx); err != nil {
			res.Action = action.Failed
			return res, fmt.Errorf("%s delete failed: %w", res.Ref(), err)
		}
		err = m.client(mapping, namespace).Delete(ctx, name, del)
		switch {
		case apierrors.IsNotFound(err):
			res.Action = action.Absent
		case apierrors.IsConflict(err) && cfg.fence != "":
			if attempt < maxDeleteAttempts {
				continue // changed or replaced since it was read: judge it again
			}
			res.Action = action.Failed
			return res, fmt.Errorf("%s delete failed: it changed %d times while being deleted: %w", res.Ref(), attempt, err)
		case apierrors.IsConflict(err): // the precondition failed: it is someone else's now
			res.Action = action.Skipped
			return res, fmt.Errorf("%s delete refused: %w: it was replaced", res.Ref(), ErrNotOwned)
		case err != nil:
			res.Action = action.Failed
			return res, fmt.Errorf("%s delete failed: %w", res.Ref(), err)
		}
		return res, nil
	}
}

// maxDeleteAttempts bounds how often a fenced delete reads an object
// again that others keep changing (a Deployment's status, say).
const maxDeleteAttempts = 5
