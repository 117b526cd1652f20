package apply

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Applier writes objects with server-side apply. It is safe for concurrent
// use.
type Applier struct {
	dyn    dynamic.Interface
	meta   metadata.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// HashAnnotation names the annotation that carries an object's desired
	// content hash; objects without it are always applied.
	HashAnnotation string
}

// New returns an Applier for the cluster cfg reaches. hashAnnotation names
// the annotation compared to skip unchanged objects.
func New(cfg *rest.Config, hashAnnotation string) (*Applier, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	return &Applier{
		dyn:            dyn,
		meta:           mc,
		mapper:         restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		HashAnnotation: hashAnnotation,
	}, nil
}

// Resource returns the resource (plural) serving gvk, refreshing discovery
// once when the kind is unknown. It returns ErrKindNotInstalled when the
// kind is still unknown after the refresh.
func (a *Applier) Resource(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if isNoMatch(err) {
		a.mapper.Reset()
		m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if isNoMatch(err) {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, ErrKindNotInstalled)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: rest mapping: %w", gvk.Kind, err)
	}
	return m, nil
}

func (a *Applier) client(m *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dyn.Resource(m.Resource).Namespace(ns)
	}
	return a.dyn.Resource(m.Resource)
}

// Apply makes the live object match obj. It skips the write when the live
// object already carries obj's content hash and no other field manager owns
// its fields; otherwise it server-side applies with force. Errors name the
// object: "Deployment/ns/name apply failed: ...".
func (a *Applier) Apply(ctx context.Context, obj *unstructured.Unstructured, opts ...Option) (Result, error) {
	res := resultFor(obj)
	m, err := a.Resource(obj.GroupVersionKind())
	if err != nil {
		return res, fmt.Errorf("%s apply failed: %w", res.Ref(), err)
	}
	var cfg options
	for _, o := range opts {
		o(&cfg)
	}
	live := cfg.live
	if live == nil {
		live, err = a.meta.Resource(m.Resource).Namespace(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		res.Action = Created
	case err != nil:
		return res, fmt.Errorf("%s apply failed: read live: %w", res.Ref(), err)
	case a.upToDate(live, obj):
		res.Action = Unchanged
		return res, nil
	default:
		res.Action = Configured
	}
	if err := expired(ctx); err != nil {
		return res, fmt.Errorf("%s apply failed: %w", res.Ref(), err)
	}
	ao := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	if _, err := a.client(m, obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, ao); err != nil {
		return res, fmt.Errorf("%s apply failed: %w", res.Ref(), err)
	}
	return res, nil
}

// DryRun server-side applies obj without persisting it and returns what the
// API server would store.
func (a *Applier) DryRun(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	res := resultFor(obj)
	m, err := a.Resource(obj.GroupVersionKind())
	if err != nil {
		return nil, fmt.Errorf("%s dry-run failed: %w", res.Ref(), err)
	}
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true, DryRun: []string{metav1.DryRunAll}}
	out, err := a.client(m, obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, opts)
	if err != nil {
		return nil, fmt.Errorf("%s dry-run failed: %w", res.Ref(), err)
	}
	return out, nil
}

// Delete removes the object named by gvk, namespace and name, in the
// background (dependents are garbage collected). A missing object is not an
// error: the result says Absent.
func (a *Applier) Delete(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (Result, error) {
	res := Result{Kind: gvk.Kind, Namespace: namespace, Name: name, Action: Deleted}
	m, err := a.Resource(gvk)
	if err != nil {
		return res, fmt.Errorf("%s delete failed: %w", res.Ref(), err)
	}
	if err := expired(ctx); err != nil {
		return res, fmt.Errorf("%s delete failed: %w", res.Ref(), err)
	}
	policy := metav1.DeletePropagationBackground
	err = a.client(m, namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) {
		res.Action = Absent
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("%s delete failed: %w", res.Ref(), err)
	}
	return res, nil
}

func resultFor(obj *unstructured.Unstructured) Result {
	return Result{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// expired checks ctx by the wall clock right before a write: a process that
// was paused past ctx's deadline must not send the write it was preparing
// before the runtime has noticed the deadline and cancelled ctx.
func expired(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return ctx.Err()
}
