package apply

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fromWatchCache asks for any version the API server holds (resource
// version "0"): served from its watch cache, with no read from etcd.
var fromWatchCache = metav1.GetOptions{ResourceVersion: "0"}

// Prefetch starts reading, concurrently and in the background, the live
// metadata of the objects known has no answer for (one whose name
// someone else's object holds, say), so that these reads overlap with what the caller does
// before it applies instead of coming one by one inside ApplyAll. The
// returned function is a SetOptions.Live: known first, then what was read
// (nil and ok when the object does not exist), waiting for the reads; an
// object whose read failed, or whose kind the API server does not serve,
// is left to Apply to read itself.
//
// The reads are answered from the API server's watch cache
// (fromWatchCache), not from etcd: an answer is as old as that cache,
// which trails etcd by the time a watch event takes to arrive. Apply
// therefore creates an object read as absent without force: one someone
// else has created since, setting a field the caller sets to another
// value, comes back as a conflict and is read and judged again (refused
// when it is not the caller's); only one created in between that sets
// none of those fields, or the same values, would be shared.
func (m *Manager) Prefetch(ctx context.Context, objs []*unstructured.Unstructured,
	known func(*unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool)) func(*unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool) {
	type read struct {
		live *metav1.PartialObjectMetadata
		ok   bool
	}
	reads := map[*unstructured.Unstructured]*read{}
	var wg sync.WaitGroup
	for _, obj := range objs {
		if _, ok := known(obj); ok {
			continue
		}
		mapping, err := m.Resource(obj.GroupVersionKind())
		if err != nil {
			continue
		}
		r := &read{}
		reads[obj] = r
		wg.Go(func() {
			live, err := m.metaClient(mapping, obj.GetNamespace()).Get(ctx, obj.GetName(), fromWatchCache)
			switch {
			case apierrors.IsNotFound(err):
				r.ok = true
			case err == nil:
				r.live, r.ok = live, true
			}
		})
	}
	return func(obj *unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool) {
		if live, ok := known(obj); ok {
			return live, true
		}
		wg.Wait()
		if r, ok := reads[obj]; ok && r.ok {
			return r.live, true
		}
		return nil, false
	}
}
