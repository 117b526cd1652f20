package chaos

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// Markers answers, for a key whose Deployment was just deleted, the
// lowest delete marker above the last revision the Deployment carried
// (Driver.MarkerAfter).
type Markers func(key string, rev uint64) (marker uint64, ok, unsure bool)

// History watches the Deployments of one namespace and records the
// revision each carried over time (annotation tinyctl.io/revision). It
// reports a revision lower than one seen before on the same object
// (applied revisions went backwards), a Deployment re-created with a
// revision older than the delete marker that removed it (a resurrected
// spec), and a Deployment deleted with no delete marker above its
// revision (a wrongful delete).
type History struct {
	ns      string
	markers Markers

	mu         sync.Mutex
	keys       map[string]*objectLog
	violations []string
	events     int
	restarts   int
}

type objectLog struct {
	alive bool
	last  uint64 // revision of the live object, or of the last one deleted
	floor uint64 // a re-created object must carry a revision at least this
	seen  int
}

// WatchDeployments starts recording the Deployments of ns until ctx ends.
// It lists and watches again after any error, so it survives an API
// server restart.
func WatchDeployments(ctx context.Context, cs kubernetes.Interface, ns string, markers Markers) *History {
	h := &History{ns: ns, markers: markers, keys: map[string]*objectLog{}}
	go h.run(ctx, cs)
	return h
}

func (h *History) run(ctx context.Context, cs kubernetes.Interface) {
	rv := ""
	for ctx.Err() == nil {
		if rv == "" {
			rv = h.relist(ctx, cs)
		}
		if rv != "" {
			rv = h.follow(ctx, cs, rv)
		}
		h.mu.Lock()
		h.restarts++
		h.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond): // retry pause, not a wait for a condition
		}
	}
}

// relist lists the Deployments, records each, treats the ones that went
// missing as deleted, and returns the list's resource version ("" on
// error).
func (h *History) relist(ctx context.Context, cs kubernetes.Interface) string {
	list, err := cs.AppsV1().Deployments(h.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	present := map[string]bool{}
	for i := range list.Items {
		d := &list.Items[i]
		present[d.Name] = true
		h.observe(watch.Modified, d)
	}
	h.mu.Lock()
	var gone []string
	for name, l := range h.keys {
		if l.alive && !present[name] {
			gone = append(gone, name)
		}
	}
	h.mu.Unlock()
	for _, name := range gone {
		h.observe(watch.Deleted, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	return list.ResourceVersion
}

// follow watches from rv until the watch ends and returns the resource
// version to resume from ("" to list again).
func (h *History) follow(ctx context.Context, cs kubernetes.Interface, rv string) string {
	w, err := cs.AppsV1().Deployments(h.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return ""
		}
		return rv
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			return ""
		case watch.Bookmark:
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				rv = d.ResourceVersion
			}
		default:
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				rv = d.ResourceVersion
				h.observe(ev.Type, d)
			}
		}
	}
	return rv
}

// observe records one event of Deployment d.
func (h *History) observe(typ watch.EventType, d *appsv1.Deployment) {
	key := api.Key(h.ns, d.Name)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events++
	l := h.keys[d.Name]
	if l == nil {
		l = &objectLog{}
		h.keys[d.Name] = l
	}
	if typ == watch.Deleted {
		if !l.alive {
			return
		}
		l.alive = false
		marker, ok, unsure := h.markers(key, l.last)
		switch {
		case ok:
			l.floor = marker
		case !unsure:
			h.violations = append(h.violations, fmt.Sprintf("wrongful delete: %s deleted at revision %d with no delete marker above it", key, l.last))
		}
		l.floor = max(l.floor, l.last+1)
		return
	}
	rev, err := strconv.ParseUint(d.Annotations[render.AnnotationRevision], 10, 64)
	if err != nil {
		return
	}
	switch {
	case !l.alive && l.floor > 0 && rev < l.floor:
		h.violations = append(h.violations, fmt.Sprintf("resurrected: %s re-created at revision %d after its delete (marker %d)", key, rev, l.floor))
	case l.alive && rev < l.last:
		h.violations = append(h.violations, fmt.Sprintf("backwards: %s went from revision %d to %d", key, l.last, rev))
	}
	if rev != l.last || !l.alive {
		l.seen++
	}
	l.alive, l.last = true, rev
}

// Reset forgets every object's past: a recreated bucket starts its
// revisions again.
func (h *History) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.keys {
		l.last, l.floor = 0, 0
	}
}

// Violations returns what went wrong so far.
func (h *History) Violations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.violations...)
}

// Events returns how many Deployment events the watch recorded (lists
// included).
func (h *History) Events() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.events
}

// Revisions returns how many distinct revisions were seen applied, over
// all Deployments.
func (h *History) Revisions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.keys {
		n += l.seen
	}
	return n
}
