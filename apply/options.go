package apply

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Option tunes one Apply.
type Option func(*options)

type options struct {
	live *metav1.PartialObjectMetadata
}

// KnownLive gives Apply the live object's metadata, typically from an
// informer's cache, so it decides whether to write without reading the
// object from the API server. A cache that lags costs at most a no-op
// apply, or a revert that waits for the informer's next event.
func KnownLive(m *metav1.PartialObjectMetadata) Option {
	return func(o *options) { o.live = m }
}
