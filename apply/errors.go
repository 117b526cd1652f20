package apply

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrKindNotInstalled means the API server does not serve the object's kind
// (for example the KEDA ScaledObject CRD is not installed). Callers treat it
// as "waiting": apply the rest and check again later.
var ErrKindNotInstalled = errors.New("kind not installed in the cluster")

// ErrNotOwned means an object exists under the name but does not carry the
// owner label Owned asked for: it belongs to someone else and was left
// alone.
var ErrNotOwned = errors.New("object exists and is not owned by this component")

// notOwned explains whose the live object is.
func notOwned(live *metav1.PartialObjectMetadata, o options) error {
	if v, ok := live.GetLabels()[o.ownerLabel]; ok {
		return fmt.Errorf("%w: its %s label is %q, not %q", ErrNotOwned, o.ownerLabel, v, o.ownerValue)
	}
	return fmt.Errorf("%w: it has no %s label (tinyctl did not create it)", ErrNotOwned, o.ownerLabel)
}

// IsPermanent reports whether err is a rejection that retrying the same
// object cannot fix: the API server found it invalid or malformed.
func IsPermanent(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsUnsupportedMediaType(err)
}

func isNoMatch(err error) bool { return meta.IsNoMatchError(err) }
