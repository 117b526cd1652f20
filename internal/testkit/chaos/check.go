package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/render"
)

var scaledObjects = schema.GroupVersionResource{Group: "keda.sh", Version: "v1alpha1", Resource: "scaledobjects"}

// Snapshot is what one namespace holds at one moment: the managed
// Kubernetes objects by name, their revisions, and the cluster's status
// records by key.
type Snapshot struct {
	Deployments map[string]appsv1.Deployment
	Policies    map[string]networkingv1.NetworkPolicy
	// Scaled holds each ScaledObject's revision annotation by name; nil
	// when the ScaledObject CRD is not installed.
	Scaled   map[string]string
	Statuses map[string]api.Status
}

// Take reads a Snapshot of namespace ns and cluster's status records.
func Take(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, st *status.Store, ns, cluster string) (Snapshot, error) {
	s := Snapshot{Deployments: map[string]appsv1.Deployment{}, Policies: map[string]networkingv1.NetworkPolicy{}, Statuses: map[string]api.Status{}}
	managed := metav1.ListOptions{LabelSelector: render.LabelComponent}
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, managed)
	if err != nil {
		return s, fmt.Errorf("list deployments: %w", err)
	}
	for _, d := range deps.Items {
		s.Deployments[d.Name] = d
	}
	pols, err := cs.NetworkingV1().NetworkPolicies(ns).List(ctx, managed)
	if err != nil {
		return s, fmt.Errorf("list network policies: %w", err)
	}
	for _, p := range pols.Items {
		s.Policies[p.Name] = p
	}
	sos, err := dyn.Resource(scaledObjects).Namespace(ns).List(ctx, managed)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return s, fmt.Errorf("list scaled objects: %w", err)
	default:
		s.Scaled = map[string]string{}
		for _, so := range sos.Items {
			s.Scaled[so.GetName()] = so.GetAnnotations()[render.AnnotationRevision]
		}
	}
	recs, err := st.ListCluster(ctx, cluster)
	if err != nil {
		return s, fmt.Errorf("list status: %w", err)
	}
	for _, r := range recs {
		if r.Err == nil {
			s.Statuses[r.Component] = r.Status
		}
	}
	return s, nil
}

// Converged checks invariants I1 to I3 against truth (the bucket's state
// per key of the names given): a key with a value has Applied status at its
// revision and its Deployment carries that revision and that revision's
// content (the spec's CHAOS_SEQ); a deleted key has no child and no
// status; a key the bucket does not know keeps its children only as
// reported orphans; and nothing managed exists under another name. scaled
// says which names must have a ScaledObject. It returns how many live
// keys' content it compared, and an error listing the first problems, nil
// when all hold.
func Converged(truth map[string]Want, ns string, names []string, scaled func(string) bool, s Snapshot) (compared int, err error) {
	var problems []string
	for _, name := range names {
		w := truth[api.Key(ns, name)]
		if w.Live() && !w.Invalid {
			compared++
		}
		problems = append(problems, keyProblems(w, api.Key(ns, name), name, scaled != nil && scaled(name), s)...)
	}
	for name := range s.Deployments {
		if !slices.Contains(names, name) {
			problems = append(problems, "Deployment "+name+" has no key")
		}
	}
	for name := range s.Policies {
		if !slices.Contains(names, name) {
			problems = append(problems, "NetworkPolicy "+name+" has no key")
		}
	}
	return compared, joinFirst(problems, 6)
}

func keyProblems(w Want, key, name string, scaled bool, s Snapshot) []string {
	st, hasStatus := s.Statuses[key]
	d, hasDep := s.Deployments[name]
	_, hasPol := s.Policies[name]
	_, hasSO := s.Scaled[name]
	var p []string
	switch {
	case w.Live() && w.Invalid:
		// Nothing of this revision is applied: it is reported Stalled, and
		// the children of the last valid one stay (whatever bucket that was
		// in, so their revision says nothing here).
		if !hasStatus || st.ObservedRevision != w.Revision || !st.IsTrue(api.ConditionStalled) {
			p = append(p, fmt.Sprintf("%s: invalid at %d, status %s, want Stalled at %d", key, w.Revision, statusLine(st, hasStatus), w.Revision))
		}
	case w.Live():
		want := strconv.FormatUint(w.Revision, 10)
		if !hasStatus || st.ObservedRevision != w.Revision || !st.IsTrue(api.ConditionApplied) {
			p = append(p, fmt.Sprintf("%s: status %s, want Applied at %d", key, statusLine(st, hasStatus), w.Revision))
		}
		if got := d.Annotations[render.AnnotationRevision]; !hasDep || got != want {
			p = append(p, fmt.Sprintf("%s: Deployment at %q, want %s", key, got, want))
		} else if got := envOf(d, "CHAOS_SEQ"); got != w.Seq {
			p = append(p, fmt.Sprintf("%s: Deployment at revision %s runs CHAOS_SEQ=%q, the revision's spec says %q", key, want, got, w.Seq))
		}
		// The driver's puts change only the Deployment's content; the other
		// children keep the revision their content last changed at (skip by
		// hash), which after a bucket is recreated may even be above the new
		// bucket's revisions. They must exist.
		if !hasPol {
			p = append(p, fmt.Sprintf("%s: no NetworkPolicy", key))
		}
		if scaled && !hasSO {
			p = append(p, fmt.Sprintf("%s: no ScaledObject", key))
		}
	case w.Deleted:
		if hasDep || hasPol || hasSO {
			p = append(p, fmt.Sprintf("%s: deleted at %d but children remain (Deployment %v, NetworkPolicy %v, ScaledObject %v)", key, w.Revision, hasDep, hasPol, hasSO))
		}
		if hasStatus {
			p = append(p, fmt.Sprintf("%s: deleted at %d but has status %s", key, w.Revision, statusLine(st, true)))
		}
	default: // no key: children may only stay as reported orphans
		if (hasDep || hasPol) && !st.IsTrue(api.ConditionOrphaned) {
			p = append(p, fmt.Sprintf("%s: no key, children kept but not reported orphaned (status %s)", key, statusLine(st, hasStatus)))
		}
	}
	return p
}

// envOf is the value of the first container's variable name ("" none).
func envOf(d appsv1.Deployment, name string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

func statusLine(st api.Status, ok bool) string {
	if !ok {
		return "none"
	}
	var conds []string
	for _, c := range st.Conditions {
		conds = append(conds, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	return fmt.Sprintf("at %d [%s] %s", st.ObservedRevision, strings.Join(conds, " "), st.Error)
}

func joinFirst(problems []string, n int) error {
	if len(problems) == 0 {
		return nil
	}
	slices.Sort(problems)
	more := ""
	if len(problems) > n {
		more = fmt.Sprintf("\n(and %d more)", len(problems)-n)
		problems = problems[:n]
	}
	return errors.New(strings.Join(problems, "\n") + more)
}

// Security checks invariant I7 on every Deployment of s: the restricted
// Pod Security fields are set on the pod and every container, and a
// NetworkPolicy of the same name exists.
func Security(s Snapshot) []string {
	var out []string
	for name, d := range s.Deployments {
		for _, why := range podProblems(d.Spec.Template.Spec) {
			out = append(out, "Deployment "+name+": "+why)
		}
		if _, ok := s.Policies[name]; !ok {
			out = append(out, "Deployment "+name+": no NetworkPolicy")
		}
	}
	slices.Sort(out)
	return out
}

func podProblems(pod corev1.PodSpec) []string {
	var out []string
	psc := pod.SecurityContext
	podNonRoot := psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
	podSeccomp := psc != nil && psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		sc := c.SecurityContext
		if sc == nil {
			out = append(out, c.Name+": no securityContext")
			continue
		}
		if !podNonRoot && (sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot) {
			out = append(out, c.Name+": runAsNonRoot not set")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			out = append(out, c.Name+": allowPrivilegeEscalation not false")
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			out = append(out, c.Name+": capabilities do not drop ALL")
		}
		if !podSeccomp && (sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault) {
			out = append(out, c.Name+": seccomp not RuntimeDefault")
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			out = append(out, c.Name+": root filesystem writable")
		}
		if sc.Privileged != nil && *sc.Privileged {
			out = append(out, c.Name+": privileged")
		}
	}
	return out
}

// StreamState is what invariant I5 compares of one component stream: its
// messages and when its durable consumer was created.
type StreamState struct {
	Msgs            uint64
	ConsumerCreated time.Time
}

// Streams reads every stream whose name starts with prefix and its
// durable consumer (render.ConsumerName's "<stream>_worker").
func Streams(ctx context.Context, js jetstream.JetStream, prefix string) (map[string]StreamState, error) {
	out := map[string]StreamState{}
	names := js.StreamNames(ctx)
	for name := range names.Name() {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		s, err := js.Stream(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", name, err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", name, err)
		}
		st := StreamState{Msgs: info.State.Msgs}
		if ci, err := s.Consumer(ctx, name+"_worker"); err == nil {
			st.ConsumerCreated = ci.CachedInfo().Created
		}
		out[name] = st
	}
	if err := names.Err(); err != nil {
		return nil, fmt.Errorf("list streams: %w", err)
	}
	return out, nil
}

// CompareStreams checks invariant I5 between two readings: no stream
// that held messages disappeared or lost them (nothing consumes in these
// tests, and no spec asks for its stream to be deleted), and no durable
// consumer was re-created. A reading before with no stream holding
// messages, or no consumer, compares nothing and is a problem too.
func CompareStreams(before, after map[string]StreamState) []string {
	var out []string
	withMsgs, withConsumer := 0, 0
	for _, b := range before {
		if b.Msgs > 0 {
			withMsgs++
		}
		if !b.ConsumerCreated.IsZero() {
			withConsumer++
		}
	}
	if withMsgs == 0 || withConsumer == 0 {
		out = append(out, fmt.Sprintf("compared nothing: %d streams before, %d holding messages, %d with a consumer", len(before), withMsgs, withConsumer))
	}
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("stream %s (%d messages) deleted", name, b.Msgs))
		case a.Msgs < b.Msgs:
			out = append(out, fmt.Sprintf("stream %s lost messages: %d -> %d", name, b.Msgs, a.Msgs))
		case !b.ConsumerCreated.IsZero() && !a.ConsumerCreated.Equal(b.ConsumerCreated):
			out = append(out, fmt.Sprintf("consumer of %s re-created: %s -> %s", name, b.ConsumerCreated, a.ConsumerCreated))
		}
	}
	slices.Sort(out)
	return out
}
