package workload

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// Watcher keeps the Deployments and pods tinyctl manages (label
// app.kubernetes.io/managed-by=tinyctl), trimmed to what Assess reads, and
// calls onChange with a component's spec key when what Assess would say of
// it may have changed. Without permission to list pods it runs on the
// Deployments alone (reasons then stop at Progressing and
// ProgressDeadlineExceeded) and Unwatched says so.
type Watcher struct {
	cs         kubernetes.Interface
	namespaces []string
	onChange   func(key string)
	// keep makes what the Deployment cache keeps of each Deployment's
	// metadata for another reader (KeepMetadata; nil: nothing).
	keep func(metav1.ObjectMeta) any

	mu          sync.Mutex
	deployments []cache.SharedIndexInformer
	pods        []cache.SharedIndexInformer
	podsRefused error
}

// NewWatcher watches in namespaces (empty: cluster-wide), through cs.
func NewWatcher(cs kubernetes.Interface, namespaces []string, onChange func(key string)) *Watcher {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	return &Watcher{cs: cs, namespaces: namespaces, onChange: onChange}
}

// KeepMetadata makes the Deployment cache keep what keep returns of each
// Deployment's metadata, for a second reader of the same informers
// (Deployments, Kept) that would otherwise watch the Deployments again.
// Call it before Start.
func (w *Watcher) KeepMetadata(keep func(metav1.ObjectMeta) any) {
	w.keep = keep
}

// Deployments returns the Deployment informer of namespace scope ns (one
// of the Watcher's namespaces, "" when it watches cluster-wide), nil
// before Start has started it. Its objects are the Watcher's own; read
// what KeepMetadata kept of them with Kept. Its indexes include
// cache.NamespaceIndex.
func (w *Watcher) Deployments(ns string) cache.SharedIndexInformer {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, scope := range w.namespaces {
		if scope == ns && i < len(w.deployments) {
			return w.deployments[i]
		}
	}
	return nil
}

// Start runs the informers until ctx ends and waits for their caches. It
// fails when Deployments cannot be listed; pods it may not list are left
// out (see Unwatched), and a later Start tries them again.
func (w *Watcher) Start(ctx context.Context) error {
	w.mu.Lock()
	haveDeployments, havePods := len(w.deployments) > 0, len(w.pods) > 0
	w.mu.Unlock()
	if !haveDeployments {
		infs, err := w.startAll(ctx, "Deployment", w.newDeploymentInformer)
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.deployments = infs
		w.mu.Unlock()
	}
	if havePods {
		return nil
	}
	infs, err := w.startAll(ctx, "Pod", w.newPodInformer)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pods, w.podsRefused = infs, err
	return nil
}

// Unwatched says why pods are not watched ("" when they are).
func (w *Watcher) Unwatched() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.podsRefused == nil {
		return ""
	}
	return "Pod: " + w.podsRefused.Error()
}

// startAll starts one informer per namespace, stopping all of them if
// one fails.
func (w *Watcher) startAll(ctx context.Context, kind string, build func(ns string) cache.SharedIndexInformer) ([]cache.SharedIndexInformer, error) {
	kctx, cancel := context.WithCancel(ctx)
	var out []cache.SharedIndexInformer
	for _, ns := range w.namespaces {
		inf := build(ns)
		if err := RunInformer(kctx, inf); err != nil {
			cancel()
			return nil, fmt.Errorf("%s informer in namespace %q: %w", kind, ns, err)
		}
		out = append(out, inf)
	}
	context.AfterFunc(ctx, cancel)
	return out, nil
}

// RunInformer runs inf until ctx ends and waits until its cache is filled.
// A list the API server refuses (Forbidden, Unauthorized) is returned at
// once instead of waiting forever; the caller then ends ctx.
func RunInformer(ctx context.Context, inf cache.SharedIndexInformer) error {
	refused := make(chan error, 1)
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			select {
			case refused <- err:
			default:
			}
		}
	})
	go inf.Run(ctx.Done())
	synced := make(chan bool, 1)
	// Waits on the informer's channel, not WaitForCacheSync's 100 ms
	// polls: each informer started one after another at start-up would
	// cost up to a tenth of a second of doing nothing.
	go func() { synced <- cache.WaitFor(ctx, "", inf.HasSyncedChecker()) }()
	select {
	case ok := <-synced:
		if ok {
			return nil
		}
		return fmt.Errorf("cache did not sync: %w", ctx.Err())
	case err := <-refused:
		return err
	}
}

func managed(o *metav1.ListOptions) {
	o.LabelSelector = render.LabelManagedBy + "=" + render.ManagedByValue
}

func (w *Watcher) newDeploymentInformer(ns string) cache.SharedIndexInformer {
	inf := appsinformers.NewFilteredDeploymentInformer(w.cs, ns, 10*time.Hour,
		cache.Indexers{ComponentIndex: byComponent, cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, managed)
	_ = inf.SetTransform(trimDeployment(w.keep))
	w.notifyOnChange(inf)
	return inf
}

func (w *Watcher) newPodInformer(ns string) cache.SharedIndexInformer {
	inf := coreinformers.NewFilteredPodInformer(w.cs, ns, 10*time.Hour, cache.Indexers{ComponentIndex: byComponent}, managed)
	_ = inf.SetTransform(trimPod)
	w.notifyOnChange(inf)
	return inf
}

// notifyOnChange calls onChange for every object added after the initial
// listing, changed in what Assess reads, or deleted.
func (w *Watcher) notifyOnChange(inf cache.SharedIndexInformer) {
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial {
				w.notify(obj)
			}
		},
		UpdateFunc: func(old, cur any) {
			if !sameHealthInputs(old, cur) {
				w.notify(cur)
			}
		},
		DeleteFunc: w.notify,
	})
}

func (w *Watcher) notify(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if _, name := componentLabels(obj); name != "" {
		w.onChange(api.Key(namespaceOf(obj), name))
	}
}

// sameHealthInputs compares two trimmed objects, their resource versions
// aside.
func sameHealthInputs(old, cur any) bool {
	switch o := old.(type) {
	case *cachedDeployment:
		n, ok := cur.(*cachedDeployment)
		return ok && o.generation == n.generation && o.hash == n.hash &&
			equality.Semantic.DeepEqual(o.replicas, n.replicas) &&
			equality.Semantic.DeepEqual(o.status, n.status)
	case *corev1.Pod:
		n, ok := cur.(*corev1.Pod)
		return ok && (o.DeletionTimestamp == nil) == (n.DeletionTimestamp == nil) &&
			equality.Semantic.DeepEqual(o.Status, n.Status)
	}
	return false
}

// byComponent files the cached Deployments and pods by component.
var byComponent = IndexComponentBucket(func(obj any) string {
	c, _ := componentLabels(obj)
	return c
})

// Health assesses the workload of component namespace/name from the
// caches. hash is the content hash of the Deployment just applied: until
// the cache holds that Deployment, what it holds describes an older
// revision, and the workload is reported as progressing.
func (w *Watcher) Health(namespace, name, hash string) Health {
	want := render.ComponentLabelValue(namespace, name)
	w.mu.Lock()
	deployments, pods := slices.Clone(w.deployments), slices.Clone(w.pods)
	w.mu.Unlock()
	var d *cachedDeployment
	for _, o := range cached(deployments, want, namespace) {
		if dep, ok := o.(*cachedDeployment); ok {
			d = dep
		}
	}
	if d != nil && d.hash != hash {
		return progressing("the applied Deployment is not observed yet")
	}
	var ps []*corev1.Pod
	for _, o := range cached(pods, want, namespace) {
		if p, ok := o.(*corev1.Pod); ok {
			ps = append(ps, p)
		}
	}
	return Assess(d.deployment(), ps)
}

// cached returns the objects of infs labelled as component want in
// namespace ns.
func cached(infs []cache.SharedIndexInformer, want, ns string) []any {
	var out []any
	for _, inf := range infs {
		for _, o := range InComponentBucket(inf.GetIndexer(), want) {
			if c, _ := componentLabels(o); c != want {
				continue
			}
			if namespaceOf(o) == ns {
				out = append(out, o)
			}
		}
	}
	return out
}

// trimMeta keeps what the pod cache is looked up by.
func trimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, DeletionTimestamp: m.DeletionTimestamp, Labels: map[string]string{}}
	for _, k := range []string{render.LabelName, render.LabelComponent} {
		if v, ok := m.Labels[k]; ok {
			out.Labels[k] = v
		}
	}
	if h, ok := m.Annotations[render.AnnotationContentHash]; ok {
		out.Annotations = map[string]string{render.AnnotationContentHash: h}
	}
	return out
}

// trimPod keeps what Assess reads of a pod.
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{ObjectMeta: trimMeta(p.ObjectMeta), Status: corev1.PodStatus{Phase: p.Status.Phase}}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			out.Status.Conditions = append(out.Status.Conditions, corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	out.Status.InitContainerStatuses = trimContainers(p.Status.InitContainerStatuses)
	out.Status.ContainerStatuses = trimContainers(p.Status.ContainerStatuses)
	return out, nil
}

func trimContainers(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range in {
		// Whether it restarted, not how often: a restart that changes
		// no judgement then notifies nobody.
		t := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: c.Ready, RestartCount: min(c.RestartCount, 1)}
		if w := c.State.Waiting; w != nil {
			t.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason}
			if _, flaps := waitingReasonsWithoutMessage[w.Reason]; !flaps {
				t.State.Waiting.Message = w.Message
			}
		}
		if x := c.State.Terminated; x != nil {
			t.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: x.ExitCode, Reason: x.Reason}
		}
		if x := c.LastTerminationState.Terminated; x != nil {
			t.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: x.ExitCode, Reason: x.Reason}
		}
		out = append(out, t)
	}
	return out
}

// waitingReasonsWithoutMessage are the waiting reasons whose kubelet
// message changes with every retry (a back-off's length, a pull's error):
// Assess words them itself, so the cache drops the message and a retry
// notifies nobody.
var waitingReasonsWithoutMessage = map[string]bool{
	"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true,
}
