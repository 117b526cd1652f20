package apply

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AnnotationFence holds, on every object a fenced write leaves, the
// fencing token of the controller tenure that wrote it (lease.Token: the
// server's time of the lease's acquisition, fixed width, so tokens compare
// as strings). The chart's ValidatingAdmissionPolicy refuses an update
// whose token is older than the live object's: a write a deposed leader
// sent before its lease ran out, delayed in the network until a newer
// leader had written the object, does not land (docs/leases.md).
const AnnotationFence = "tinyctl.io/fence"

// ErrFenced means the object carries a newer tenure's token than the
// writer's: another controller has taken over and written it. The write
// was not made: the API server's admission policy refused it, or the
// object as last read already showed the newer token, and nothing was
// sent.
var ErrFenced = errors.New("the object was written by a newer controller tenure")

// Fenced makes Apply stamp the object with token (AnnotationFence) and
// makes Apply and Delete refuse, with ErrFenced, an object whose live
// token is newer. A Delete also reads the object and deletes it only at
// the version read, so a deposed leader's late delete cannot remove what
// a newer leader wrote meanwhile. An empty token fences nothing.
func Fenced(token string) Option {
	return func(o *options) { o.fence = token }
}

// fencedOut returns ErrFenced, naming both tokens, when live carries a
// newer token than the options'.
func (o options) fencedOut(ref string, live metav1.Object) error {
	if o.fence == "" || live == nil {
		return nil
	}
	if theirs := live.GetAnnotations()[AnnotationFence]; theirs > o.fence {
		return fmt.Errorf("%s: %w: it carries token %s, this controller's is %s", ref, ErrFenced, theirs, o.fence)
	}
	return nil
}

// stamped returns obj with the options' token, a copy when one is added:
// a copy of its metadata, sharing the rest (nothing changes it).
func (o options) stamped(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if o.fence == "" || obj.GetAnnotations()[AnnotationFence] == o.fence {
		return obj
	}
	ann := obj.GetAnnotations() // a copy
	obj = &unstructured.Unstructured{Object: maps.Clone(obj.Object)}
	if md, ok := obj.Object["metadata"].(map[string]any); ok {
		obj.Object["metadata"] = maps.Clone(md)
	}
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationFence] = o.fence
	obj.SetAnnotations(ann)
	return obj
}

// fenceDenied reports the admission policy's refusal of an older token.
// The API server reports a policy's denial only as Forbidden with the
// policy's message, so the message is what tells it from a missing
// permission: the chart's policy opens it with the annotation's name.
func fenceDenied(err error) bool {
	var st apierrors.APIStatus
	return apierrors.IsForbidden(err) && errors.As(err, &st) &&
		strings.Contains(st.Status().Message, AnnotationFence+" is older than the object's")
}
