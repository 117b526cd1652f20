package apply

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Option tunes one Apply or Delete.
type Option func(*options)

type options struct {
	live       *metav1.PartialObjectMetadata
	absent     bool // known not to exist (live is nil)
	ownerLabel string
	ownerValue string
	fence      string // the writer's fencing token (Fenced)
}

func optionsOf(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// KnownLive gives Apply the live object's metadata, typically from an
// informer's cache, so it decides whether to write without reading the
// object from the API server. A cache that lags costs at most a no-op
// apply, or a revert that waits for the informer's next event.
func KnownLive(m *metav1.PartialObjectMetadata) Option {
	return func(o *options) { o.live = m }
}

// knownAbsent tells Apply the object does not exist, from a read made
// earlier (Prefetch), so it creates it without reading it first.
func knownAbsent() Option {
	return func(o *options) { o.absent = true }
}

// readLive undoes KnownLive and knownAbsent: Apply reads the object.
func readLive() Option {
	return func(o *options) { o.live, o.absent = nil, false }
}

// Owned makes Apply and Delete touch an existing object only when it
// carries label key=value: an object someone else made under the same
// name is neither taken over nor deleted, and the call returns
// ErrNotOwned instead. An absent object is created as usual.
func Owned(key, value string) Option {
	return func(o *options) { o.ownerLabel, o.ownerValue = key, value }
}

// owns reports whether the options allow touching live.
func (o options) owns(live *metav1.PartialObjectMetadata) bool {
	return o.ownerLabel == "" || live.GetLabels()[o.ownerLabel] == o.ownerValue
}
