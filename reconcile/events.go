package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/apply"
)

// Events hears what the controller did to components and why: each child
// it wrote or deleted, each condition that moved, each component removed
// or unplaced (docs/events.md). regarding is the Kubernetes object a
// Kubernetes Event would be about (the child written, else the component's
// Deployment, else its namespace), or nil
// when none may be written (a namespace the controller does not manage or
// that does not exist). Record must not block.
type Events interface {
	Record(e event.Event, regarding *corev1.ObjectReference)
}

type nopEvents struct{}

func (nopEvents) Record(event.Event, *corev1.ObjectReference) {}

// reconciling is what a sync is about, kept in its context so that every
// write it makes is recorded with the component and revision.
type reconciling struct {
	key string
	rev uint64
}

type reconcilingKey struct{}

func withReconciling(ctx context.Context, key string, rev uint64) context.Context {
	return context.WithValue(ctx, reconcilingKey{}, reconciling{key, rev})
}

// recordWrite records a child written or deleted while ctx's component
// was reconciled.
func (c *Controller) recordWrite(ctx context.Context, res apply.Result) {
	r, ok := ctx.Value(reconcilingKey{}).(reconciling)
	if !ok || !res.Wrote() {
		return
	}
	msg := res.String()
	if len(res.TakenFrom) > 0 {
		msg += fmt.Sprintf(": fields %s had changed were set back", strings.Join(res.TakenFrom, ", "))
	}
	e := event.Event{Component: r.key, Revision: r.rev, Type: event.Normal, Reason: writeReason(res.Action),
		Object: res.Kind + "/" + res.Name, Message: msg}
	c.recordAbout(e, c.writtenChild(e, res))
}

// writtenChild is the object a Kubernetes Event about write res is
// written on: the child itself (the informers may not have seen it yet),
// or nil where no event may be written (see regarding).
func (c *Controller) writtenChild(e event.Event, res apply.Result) *corev1.ObjectReference {
	if c.regarding(e) == nil {
		return nil
	}
	apiVersion := secretKind.gvk.GroupVersion().String()
	for _, k := range childKinds {
		if k.gvk.Kind == res.Kind {
			apiVersion = k.gvk.GroupVersion().String()
		}
	}
	return &corev1.ObjectReference{APIVersion: apiVersion, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name}
}

// writeReason is the event reason of a write: the action, capitalised.
func writeReason(a action.Action) string {
	s := string(a)
	if s == "" {
		return "Written"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// record stamps e with this cluster and the time and hands it on, about
// the object regarding names.
func (c *Controller) record(e event.Event) { c.recordAbout(e, c.regarding(e)) }

// recordAbout is record with the Kubernetes object the event is about.
func (c *Controller) recordAbout(e event.Event, about *corev1.ObjectReference) {
	e.Cluster, e.Time = c.cfg.Cluster.Name, c.clock.Now().UTC()
	c.events.Record(e, about)
}

// regarding is the object a Kubernetes Event about e is written on: the
// component's Deployment while it has one (the informers hold it, or its
// status record lists it), else (a spec refused before anything was made,
// a component removed) its namespace, with the event kept in that
// namespace. nil when no event may be written there: a namespace this
// controller does not manage or that, as far as it knows, does not exist.
func (c *Controller) regarding(e event.Event) *corev1.ObjectReference {
	ns, name, err := api.ParseKey(e.Component)
	if err != nil || e.Reason == reasons.NamespaceMissing || e.Reason == reasons.NamespaceNotAllowed {
		return nil
	}
	if (namespacePolicy{allowed: c.cfg.Namespaces, denied: c.cfg.DenyNamespaces}).admits(ns) != nil {
		return nil
	}
	dep := &corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name}
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(dep.APIVersion)
	obj.SetKind(dep.Kind)
	obj.SetNamespace(ns)
	obj.SetName(name)
	if live, ok := c.children.get(obj); ok && live != nil {
		dep.UID = live.UID
		return dep
	}
	if st, ok := c.status.get(e.Component); ok {
		if _, listed := st.ChildOfKind(dep.Kind); listed {
			return dep
		}
	}
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Namespace: ns, Name: ns}
}

// conditionEvents are the events of the conditions that moved from prev
// (nil: no record yet) to next, one per reason (Ready comes first, so an
// invalid spec is one Warning, not Ready's, Applied's and Stalled's):
// Ready whenever its status or reason changes; Applied when its status
// changes or, while False, its reason; Degraded, Stalled and Orphaned when
// their status changes. A condition that is new and says nothing is wrong
// (Degraded, Stalled or Orphaned False, Applied True) is not announced.
func conditionEvents(prev *api.Status, next api.Status) []event.Event {
	var out []event.Event
	seen := map[string]bool{}
	for _, cnd := range next.Conditions {
		old, had := findCondition(prev, cnd.Type)
		if !moved(old, had, cnd) {
			continue
		}
		e := event.Event{Component: next.Component, Revision: next.ObservedRevision, Type: event.Normal,
			Reason: cmp.Or(cnd.Reason, cnd.Type), Message: fmt.Sprintf("%s is %s", cnd.Type, cnd.Status)}
		if seen[e.Reason] {
			continue
		}
		seen[e.Reason] = true
		if conditionBad(cnd) {
			e.Type = event.Warning
		}
		if cnd.Message != "" {
			e.Message += ": " + cnd.Message
		}
		out = append(out, e)
	}
	return out
}

// moved reports whether condition cnd, old before (had: there was one),
// is worth an event (see conditionEvents).
func moved(old api.Condition, had bool, cnd api.Condition) bool {
	if !had {
		return cnd.Type == api.ConditionReady || conditionBad(cnd)
	}
	switch cnd.Type {
	case api.ConditionReady:
		return old.Status != cnd.Status || old.Reason != cnd.Reason
	case api.ConditionApplied:
		return old.Status != cnd.Status || cnd.Status == api.ConditionFalse && old.Reason != cnd.Reason
	}
	return old.Status != cnd.Status
}

// conditionBad reports whether cnd says something a user must look at:
// Degraded, Stalled or Orphaned True, Applied False, or Ready False for
// any reason but waiting for the workload or being suspended.
func conditionBad(cnd api.Condition) bool {
	switch cnd.Type {
	case api.ConditionDegraded, api.ConditionStalled, api.ConditionOrphaned:
		return cnd.Status == api.ConditionTrue
	case api.ConditionApplied:
		return cnd.Status == api.ConditionFalse
	case api.ConditionReady:
		return cnd.Status == api.ConditionFalse && cnd.Reason != reasons.Progressing && cnd.Reason != reasons.Suspended
	}
	return false
}

func findCondition(st *api.Status, typ string) (api.Condition, bool) {
	if st == nil {
		return api.Condition{}, false
	}
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return api.Condition{}, false
}

// Reasons of the events a removal records.
const (
	// reasonRemoved: the component's spec was deleted and its children
	// removed here.
	reasonRemoved = "Removed"
	// reasonUnplaced: the component's placement no longer selects this
	// cluster; its children were removed here, its stream kept.
	reasonUnplaced = "Unplaced"
)

// removalEvent is the event of key's status removed for why.
func removalEvent(key string, rev uint64, why, cluster string) event.Event {
	msg := "the component was deleted: its children here are removed"
	if why == reasonUnplaced {
		msg = fmt.Sprintf("the component's placement no longer selects cluster %s: its children here are removed, its stream kept", cluster)
	}
	return event.Event{Component: key, Revision: rev, Type: event.Normal, Reason: why, Message: msg}
}
