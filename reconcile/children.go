package reconcile

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/tinyctl/tinyctl/render"
	"github.com/tinyctl/tinyctl/workload"
)

// childKind is one kind of object a component owns in Kubernetes.
type childKind struct {
	gvk schema.GroupVersionKind
	gvr schema.GroupVersionResource
	// optional kinds come from a CRD that may not be installed.
	optional bool
}

// secretKind is the credentials Secret: a child the loop deletes by name,
// never lists (the controller may not read Secrets it did not make).
var secretKind = childKind{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}}

// childKinds are the listed children in removal order, the reverse of
// apply order: the ScaledObject stops scaling, the disruption budget and
// the workers go, and only then does their NetworkPolicy. The budget is
// optional like the ScaledObject: a controller whose role predates it (an
// install not run again) runs without it, its components waiting with
// KindForbidden, instead of not starting. Three fixed resources rather than the
// RESTMapper apply has: served asks one group version whether KEDA's is
// there, where the mapper would read all of discovery again at every
// recheck while KEDA is not installed.
var childKinds = []childKind{
	{schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"},
		schema.GroupVersionResource{Group: "keda.sh", Version: "v1alpha1", Resource: "scaledobjects"}, true},
	{schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
		schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, true},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, false},
	{schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
		schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, false},
}

// child identifies one live object owned by a component.
type child struct {
	kind      childKind
	namespace string
	name      string
	// component is the object's LabelComponent value: a delete checks
	// that the live object still carries it.
	component string
}

// is reports whether obj names this child.
func (ch child) is(obj *unstructured.Unstructured) bool {
	return obj.GroupVersionKind().GroupKind() == ch.kind.gvk.GroupKind() &&
		obj.GetName() == ch.name && obj.GetNamespace() == ch.namespace
}

// children watches the objects tinyctl manages, through label-selected,
// metadata-only informers, one per kind. It tells the loop when someone else
// changes or deletes a child (drift) and answers "which children does this
// component have" from the informers' caches.
type children struct {
	meta      metadata.Interface
	discovery discovery.DiscoveryInterface
	onChange  func(key string)
	// wakes reports whether an event wakes the loop now: not the loop's
	// own write, nor one held until its write ends (ownwrites.go).
	wakes func(kind, namespace, name, resourceVersion string) bool
	// namespaces scopes the informers (one per kind and namespace, so a
	// namespaced Role suffices); empty means one cluster-wide informer
	// per kind.
	namespaces []string
	// deployments, when not nil, returns the workload watcher's
	// Deployment informer of a namespace scope (nil before it runs):
	// the Deployments are then watched once, for both caches, instead
	// of a second time for their metadata.
	deployments func(ns string) cache.SharedIndexInformer

	mu        sync.Mutex
	informers map[informerKey]cache.SharedIndexInformer
	// others watch, per kind and scope, the objects without tinyctl's
	// label, for their names alone (others.go).
	others map[informerKey]cache.SharedIndexInformer
	stops  []context.CancelFunc
	// refused are the optional kinds the API server refuses to let this
	// controller list, with its answer (see refused.go).
	refused map[schema.GroupKind]error
}

type informerKey struct {
	gvr       schema.GroupVersionResource
	namespace string
}

func newChildren(meta metadata.Interface, disc discovery.DiscoveryInterface, namespaces []string, onChange func(string),
	wakes func(kind, namespace, name, resourceVersion string) bool) *children {
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	return &children{meta: meta, discovery: disc, onChange: onChange, wakes: wakes, namespaces: namespaces,
		informers: map[informerKey]cache.SharedIndexInformer{}, others: map[informerKey]cache.SharedIndexInformer{}, refused: map[schema.GroupKind]error{}}
}

// startAvailable starts an informer for every child kind the API server
// serves that has none yet, and waits for their caches to fill. Optional
// kinds whose CRD is missing, or which this controller may not list, are
// skipped (a component that needs one waits); one the API server refuses
// to list is remembered as refused and logged. Call again to pick them up.
// It fails when a required kind cannot be listed.
func (c *children) startAvailable(ctx context.Context) error {
	for _, k := range childKinds {
		if c.running(informerKey{k.gvr, c.namespaces[0]}) {
			continue
		}
		if k.optional {
			ok, err := c.served(k.gvr)
			if err != nil || !ok {
				continue
			}
		}
		err := c.startKind(ctx, k)
		switch {
		case err == nil:
			c.refuse(ctx, k, nil)
		case !k.optional:
			return err
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			c.refuse(ctx, k, err)
		}
	}
	return nil
}

// startKind starts the informers of kind k, tinyctl's objects' and the
// others', in every namespace or in none.
func (c *children) startKind(ctx context.Context, k childKind) error {
	kctx, cancel := context.WithCancel(ctx)
	infs := make(map[informerKey]cache.SharedIndexInformer, len(c.namespaces))
	others := make(map[informerKey]cache.SharedIndexInformer, len(c.namespaces))
	for _, ns := range c.namespaces {
		key := informerKey{k.gvr, ns}
		inf, err := c.start(kctx, k, ns)
		if err == nil {
			others[key] = c.newOthersInformer(k, ns)
			err = workload.RunInformer(kctx, others[key])
		}
		if err != nil {
			cancel()
			return err
		}
		infs[key] = inf
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.Copy(c.informers, infs)
	maps.Copy(c.others, others)
	c.stops = append(c.stops, cancel) // they run until ctx ends
	return nil
}

// start runs one informer until ctx ends and waits until its cache is
// filled. A list the API server refuses (Forbidden, say) is returned at
// once instead of waiting forever; the caller then ends ctx.
func (c *children) start(ctx context.Context, k childKind, ns string) (cache.SharedIndexInformer, error) {
	if k.gvk.Kind == "Deployment" && c.deployments != nil {
		if inf := c.deployments(ns); inf != nil {
			c.handle(k, inf) // running and synced already
			return inf, nil
		}
	}
	inf := c.newInformer(k, ns)
	if err := workload.RunInformer(ctx, inf); err != nil {
		return nil, fmt.Errorf("%s informer in namespace %q: %w", k.gvk.Kind, ns, err)
	}
	return inf, nil
}

func (c *children) running(k informerKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.informers[k]
	return ok
}

// served asks discovery whether the API server serves gvr.
func (c *children) served(gvr schema.GroupVersionResource) (bool, error) {
	list, err := c.discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource {
			return true, nil
		}
	}
	return false, nil
}

func (c *children) newInformer(k childKind, ns string) cache.SharedIndexInformer {
	inf := c.metadataInformer(k, ns, render.LabelManagedBy+"="+render.ManagedByValue,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, workload.ComponentIndex: byComponent}, trimChild)
	c.handle(k, inf)
	return inf
}

// metadataInformer is a metadata-only informer of kind k in scope ns,
// for the objects selector matches, kept as trim makes them.
func (c *children) metadataInformer(k childKind, ns, selector string, idx cache.Indexers,
	trim cache.TransformFunc) cache.SharedIndexInformer {
	inf := metadatainformer.NewFilteredMetadataInformer(c.meta, k.gvr, ns, 10*time.Hour, idx,
		func(o *metav1.ListOptions) { o.LabelSelector = selector }).Informer()
	_ = inf.SetTransform(trim)
	return inf
}

// handle tells the loop of the changes to children of kind k in inf that
// wake it.
func (c *children) handle(k childKind, inf cache.SharedIndexInformer) {
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		// A child that appears after the initial listing may have been
		// created by a reconcile that lost a race with a delete: its
		// component is looked at again, and removes it if it is gone.
		AddFunc: func(obj any, initialList bool) {
			if !initialList && c.woken(k, obj) {
				c.notify(obj)
			}
		},
		UpdateFunc: func(old, cur any) {
			if changedByAnyone(old, cur) && c.woken(k, cur) {
				c.notify(cur)
			}
		},
		DeleteFunc: c.notify,
	})
}

// woken reports whether an event for obj, of kind k, wakes the loop now.
func (c *children) woken(k childKind, obj any) bool {
	m, ok := asChild(obj)
	return !ok || c.wakes == nil || c.wakes(k.gvk.Kind, m.namespace, m.name, m.resourceVersion)
}

// changedByAnyone filters out status-only updates (a Deployment's status
// changes with every pod) and the Deployment controller's revision
// annotation (set after every change of the pod template, which the change
// itself already woke the loop for), so they do not cost a reconcile.
func changedByAnyone(old, cur any) bool {
	o, ok1 := asChild(old)
	n, ok2 := asChild(cur)
	if !ok1 || !ok2 {
		return true
	}
	return o.generation != n.generation || o.annotations != n.annotations ||
		o.labels != n.labels || len(o.managers) != len(n.managers)
}

// deploymentRevision is the annotation the Deployment controller keeps.
const deploymentRevision = "deployment.kubernetes.io/revision"

func (c *children) notify(obj any) {
	if m, ok := asChild(obj); ok {
		if key, ok := m.key(); ok {
			c.onChange(key)
		}
	}
}

// byComponent files the cached children by component, as the workload
// watcher files its Deployments (this cache shares them).
var byComponent = workload.IndexComponentBucket(func(obj any) string {
	if m, ok := obj.(*cachedChild); ok {
		return m.component
	}
	return ""
})

// of returns the live children of the component namespace/name.
func (c *children) of(namespace, name string) []child {
	want := render.ComponentLabelValue(namespace, name)
	c.mu.Lock()
	infs := maps.Clone(c.informers)
	c.mu.Unlock()
	var out []child
	for _, k := range childKinds {
		for _, scope := range c.namespaces {
			inf, ok := infs[informerKey{k.gvr, scope}]
			if !ok || (scope != "" && scope != namespace) {
				continue
			}
			for _, o := range workload.InComponentBucket(inf.GetIndexer(), want) {
				if m, ok := asChild(o); ok && m.component == want && m.namespace == namespace {
					out = append(out, child{kind: k, namespace: m.namespace, name: m.name, component: want})
				}
			}
		}
	}
	return out
}

// each calls fn for every cached child, in namespace ns ("" for all).
func (c *children) each(fn func(childKind, *cachedChild), ns string) {
	c.mu.Lock()
	infs := maps.Clone(c.informers)
	c.mu.Unlock()
	for _, k := range childKinds {
		for _, scope := range c.namespaces {
			inf, ok := infs[informerKey{k.gvr, scope}]
			if !ok || (ns != "" && scope != "" && scope != ns) {
				continue
			}
			var objs []any
			if ns == "" {
				objs = inf.GetStore().List()
			} else {
				objs, _ = inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
			}
			for _, o := range objs {
				if m, ok := asChild(o); ok {
					fn(k, m)
				}
			}
		}
	}
}

// get returns the cached metadata of the live object obj names, when an
// informer for its kind and namespace has it; nil and true when neither
// that informer nor the others' has an object of that name (it does not
// exist, see others.go); false when the caches cannot tell.
func (c *children) get(obj *unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool) {
	gk := obj.GroupVersionKind().GroupKind()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range childKinds {
		if k.gvk.GroupKind() != gk {
			continue
		}
		for _, scope := range []string{obj.GetNamespace(), metav1.NamespaceAll} {
			if inf, ok := c.informers[informerKey{k.gvr, scope}]; ok {
				item, exists, err := inf.GetIndexer().GetByKey(obj.GetNamespace() + "/" + obj.GetName())
				if m, isChild := asChild(item); err == nil && exists && isChild {
					return m.live(), true
				}
				key := informerKey{k.gvr, scope}
				return nil, err == nil && !exists && c.untaken(key, obj.GetNamespace(), obj.GetName())
			}
		}
	}
	return nil, false
}
