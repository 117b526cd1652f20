package reconcile

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/apply"
)

// The children informers wake the loop when a child changes, so that an
// edit by someone else is reverted. Without more, every write of the loop's
// own woke it too: each changed component was reconciled twice, the second
// time to find nothing to do (a guard read, two JetStream lookups and a
// render for nothing, on every put and on every new component at a cold
// start). The loop now marks each child's write in flight before it is
// sent and remembers the resourceVersion it left; the informer event
// carrying exactly that version wakes nobody. The watch event often comes
// before the write's response: an event that arrives while the child's
// write is in flight is held and judged when the response is in.
//
// An event of the loop's own write wakes it after all when the component
// has moved on since (a newer revision, or a delete that raced the write:
// that wake-up is what lets the delete remove the child). The informer's
// cache holds the child before any event handler runs, so a reconcile
// that a later revision or delete starts sees it either way.

// ownWrite is one write of the loop: the version it left a child at, for
// which component revision.
type ownWrite struct {
	resourceVersion string
	key             string
	rev             uint64
}

// ownWrites tracks the loop's writes of children until their informer
// events have come (one entry per child; a later event drops it).
type ownWrites struct {
	mu sync.Mutex
	// inFlight are the children being written, with the versions of the
	// events that came meanwhile.
	inFlight map[string][]string
	// written are the versions writes left whose events are still to come.
	written map[string]ownWrite
}

func newOwnWrites() *ownWrites {
	return &ownWrites{inFlight: map[string][]string{}, written: map[string]ownWrite{}}
}

// childRef names a child as apply.Result.Ref does.
func childRef(kind, namespace, name string) string {
	return apply.Result{Kind: kind, Namespace: namespace, Name: name}.Ref()
}

// writing marks the writes of objs in flight.
func (w *ownWrites) writing(objs []*unstructured.Unstructured) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range objs {
		w.inFlight[childRef(o.GetKind(), o.GetNamespace(), o.GetName())] = nil
	}
}

// wrote ends the writes of objs (cs says what each did, for revision rev
// of key) and reports whether an event held meanwhile was not the loop's
// own, which must wake it.
func (w *ownWrites) wrote(objs []*unstructured.Unstructured, cs apply.ChangeSet, key string, rev uint64) (wake bool) {
	left := map[string]string{}
	for _, res := range cs {
		if res.Wrote() && res.ResourceVersion != "" {
			left[res.Ref()] = res.ResourceVersion
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range objs {
		ref := childRef(o.GetKind(), o.GetNamespace(), o.GetName())
		held, rv := w.inFlight[ref], left[ref]
		delete(w.inFlight, ref)
		seen := false
		for _, v := range held {
			seen = seen || v == rv
			wake = wake || v != rv
		}
		if rv != "" && !seen {
			w.written[ref] = ownWrite{resourceVersion: rv, key: key, rev: rev}
		}
	}
	return wake
}

// verdict is what to do with an informer event.
type verdict int

const (
	wakeLoop verdict = iota
	heldBack         // judged when the write in flight ends
	ownEvent         // the loop's own write: wakes nobody
)

// event judges an informer event for child kind namespace/name at
// resourceVersion; latest returns the component's current revision and
// whether it still holds a value.
func (w *ownWrites) event(kind, namespace, name, resourceVersion string, latest func(key string) (uint64, bool)) verdict {
	ref := childRef(kind, namespace, name)
	w.mu.Lock()
	defer w.mu.Unlock()
	if held, ok := w.inFlight[ref]; ok {
		w.inFlight[ref] = append(held, resourceVersion)
		return heldBack
	}
	own, ok := w.written[ref]
	delete(w.written, ref)
	if !ok || own.resourceVersion != resourceVersion {
		return wakeLoop
	}
	if rev, live := latest(own.key); !live || rev != own.rev {
		return wakeLoop // moved on since the write
	}
	return ownEvent
}

// wakes reports whether the informer event for child kind namespace/name
// at resourceVersion wakes the loop now.
func (c *Controller) wakes(kind, namespace, name, resourceVersion string) bool {
	return c.own.event(kind, namespace, name, resourceVersion, func(key string) (uint64, bool) {
		e, ok := c.specs.get(key)
		return e.rev, ok && !e.deleted
	}) == wakeLoop
}
