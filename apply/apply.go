package apply

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tinyctl/tinyctl/api/action"
)

// Apply makes the live object match obj. It skips the write when the live
// object already carries obj's content hash and no other field manager
// owns a field obj sets; otherwise it server-side applies with force
// (Result.TakenFrom names the managers whose fields it takes back). With
// Owned, an object that exists without the owner's label is left alone
// and reported as ErrNotOwned; with Fenced, one a newer controller tenure
// wrote is left alone and reported as ErrFenced. Errors name the object:
// "Deployment/ns/name apply failed: ...".
func (m *Manager) Apply(ctx context.Context, obj *unstructured.Unstructured, opts ...Option) (Result, error) {
	res := resultFor(obj)
	mapping, err := m.Resource(obj.GroupVersionKind())
	if err != nil {
		return res, fmt.Errorf("%s apply failed: %w", res.Ref(), err)
	}
	cfg := optionsOf(opts)
	live := cfg.live
	if live == nil && !cfg.absent {
		live, err = m.metaClient(mapping, obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	}
	switch {
	case cfg.absent || apierrors.IsNotFound(err):
		res.Action = action.Created
	case err != nil:
		return res, fmt.Errorf("%s apply failed: read live: %w", res.Ref(), err)
	case !cfg.owns(live):
		res.Action = action.Skipped
		return res, fmt.Errorf("%s apply refused: %w", res.Ref(), notOwned(live, cfg))
	default:
		same, others := m.upToDate(live, obj)
		if same {
			res.Action = action.Unchanged
			return res, nil
		}
		if err := cfg.fencedOut(res.Ref(), live); err != nil {
			res.Action = action.Skipped
			return res, err
		}
		res.Action, res.TakenFrom = action.Configured, others
	}
	if err := expired(ctx); err != nil {
		return res, fmt.Errorf("%s apply failed: %w", res.Ref(), err)
	}
	obj = cfg.stamped(obj)
	// An object read as absent earlier (Prefetch) is created without
	// force: if someone else has created it since, with other values, the
	// API server answers with a conflict instead of handing its fields
	// over, and the object is read and judged again.
	ao := metav1.ApplyOptions{FieldManager: FieldManager, Force: !cfg.absent}
	written, err := m.send(ctx, mapping, obj, ao)
	if err != nil {
		if cfg.absent && apierrors.IsConflict(err) {
			return m.Apply(ctx, obj, append(opts[:len(opts):len(opts)], readLive())...)
		}
		res.Action = action.Failed
		if fenceDenied(err) {
			res.Action = action.Skipped
			return res, fmt.Errorf("%s apply refused: %w: %w", res.Ref(), ErrFenced, err)
		}
		return res, fmt.Errorf("%s apply failed: %w", res.Ref(), err)
	}
	res.ResourceVersion = written.GetResourceVersion()
	return res, nil
}

// send server-side applies obj and returns the metadata of the object
// written. It asks for the answer as metadata alone
// (PartialObjectMetadata, in protobuf): decoding the whole object the
// dynamic client returns, managed fields and all, cost 40 KB of garbage
// per write, of which only the resource version was read.
func (m *Manager) send(ctx context.Context, mapping *meta.RESTMapping, obj *unstructured.Unstructured,
	ao metav1.ApplyOptions) (*metav1.PartialObjectMetadata, error) {
	data, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return nil, err
	}
	return m.metaClient(mapping, obj.GetNamespace()).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, ao.ToPatchOptions())
}

func resultFor(obj *unstructured.Unstructured) Result {
	return Result{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// expired checks ctx by the wall clock right before a write: a process that
// was paused past ctx's deadline must not send the write it was preparing
// before the runtime has noticed the deadline and cancelled ctx.
func expired(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return ctx.Err()
}
