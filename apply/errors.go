package apply

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// ErrKindNotInstalled means the API server does not serve the object's kind
// (for example the KEDA ScaledObject CRD is not installed). Callers treat it
// as "waiting": apply the rest and check again later.
var ErrKindNotInstalled = errors.New("kind not installed in the cluster")

// IsPermanent reports whether err is a rejection that retrying the same
// object cannot fix: the API server found it invalid or malformed.
func IsPermanent(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsUnsupportedMediaType(err)
}

func isNoMatch(err error) bool { return meta.IsNoMatchError(err) }
