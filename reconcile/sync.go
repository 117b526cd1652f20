package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/render"
)

// errSuperseded means a newer revision (or a delete) of the key exists; the
// watch will deliver it and the key will be reconciled again.
var errSuperseded = errors.New("superseded by a newer revision")

// sync reconciles one key from its latest cached entry.
func (c *Controller) sync(ctx context.Context, key string) error {
	e, ok := c.specs.get(key)
	if !ok {
		return nil
	}
	if e.op != kv.OpPut {
		return c.remove(ctx, key, e)
	}
	r := report{revision: e.rev}
	r.children, r.err = c.apply(ctx, key, e)
	if errors.Is(r.err, errSuperseded) || errors.Is(r.err, errNotPlaced) {
		return nil
	}
	r.conditions = conditions(r.err)
	if err := c.writeStatus(ctx, key, r); err != nil {
		return errors.Join(r.err, err)
	}
	return r.err
}

// apply runs the chain for one put: decode, default, validate, render,
// check the namespace, guard against resurrection, ensure the stream and
// consumer, apply the children, prune. It returns the children it manages.
func (c *Controller) apply(ctx context.Context, key string, e specEntry) ([]api.Child, error) {
	comp, err := c.component(key, e.value)
	if err != nil {
		return nil, err
	}
	if !placed(comp, c.cfg.Cluster.Name, c.cfg.ClusterLabels) {
		return nil, c.unplace(ctx, comp)
	}
	objs, err := render.Render(comp, e.rev, c.cfg.Cluster)
	if err != nil {
		return nil, stepError("render", err)
	}
	ns := comp.Metadata.Namespace
	if err := c.ensureNamespace(ctx, ns); err != nil {
		return nil, err
	}
	if err := c.guard(ctx, key, e.rev); err != nil {
		return nil, err
	}
	res, err := c.deps.Streams.EnsureStreamAndConsumer(ctx, objs.Stream, objs.Consumer, streams.EnsureOptions{})
	if err != nil {
		return nil, stepError("stream "+objs.Stream.Name, err)
	}
	if res.Stream != api.Unchanged || res.Consumer != api.Unchanged {
		zerolog.Ctx(ctx).Info().Str("stream", string(res.Stream)).Str("consumer", string(res.Consumer)).
			Str("name", objs.Stream.Name).Msg("jetstream ensured")
	}
	desired, err := objs.Children()
	if err != nil {
		return nil, stepError("render", err)
	}
	kids, err := c.applyChildren(ctx, desired)
	if apierrors.IsNotFound(err) {
		c.namespaces.Delete(ns) // the namespace went away: check it again next time
	}
	if err != nil {
		return kids, err
	}
	if err := c.prune(ctx, comp, desired); err != nil {
		return kids, err
	}
	jetstreamKids := []api.Child{{Kind: kindStream, Name: objs.Stream.Name}, {Kind: kindConsumer, Name: objs.Consumer.Durable}}
	return append(jetstreamKids, kids...), nil
}

// component decodes, defaults and validates a stored value and checks that
// it belongs under key. Every failure matches api.ErrInvalid.
func (c *Controller) component(key string, value []byte) (api.Component, error) {
	comp, err := api.Decode(value)
	if err != nil {
		var de *api.DecodeError
		if errors.As(err, &de) && de.Partial != nil {
			if _, verr := api.Normalize(*de.Partial); verr != nil {
				return comp, errors.Join(err, verr) // every problem in one status message
			}
		}
		return comp, err
	}
	comp, err = api.Normalize(comp)
	if err != nil {
		return comp, err
	}
	if err := api.CheckKey(key, comp); err != nil {
		return comp, err
	}
	if len(c.cfg.Namespaces) > 0 && !slices.Contains(c.cfg.Namespaces, comp.Metadata.Namespace) {
		return comp, withClass(Permanent, "NamespaceNotAllowed",
			fmt.Errorf("namespace %q is not one this controller manages (%v)", comp.Metadata.Namespace, c.cfg.Namespaces))
	}
	return comp, nil
}

// guard re-reads the key's latest revision from the bucket: when it is no
// longer rev (a newer put, or a delete that landed mid-reconcile), nothing
// is written and the newer entry wins.
func (c *Controller) guard(ctx context.Context, key string, rev uint64) error {
	latest, err := c.deps.Specs.Get(ctx, key)
	if errors.Is(err, bus.ErrNotFound) {
		return errSuperseded
	}
	if err != nil {
		return stepError("read latest revision", err)
	}
	if latest.Revision != rev {
		return errSuperseded
	}
	return nil
}

// ensureNamespace checks that the target namespace exists, creating it when
// configured to.
func (c *Controller) ensureNamespace(ctx context.Context, ns string) error {
	if _, ok := c.namespaces.Load(ns); ok {
		return nil // seen before; forgotten when a write says it is gone
	}
	_, err := c.deps.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err == nil {
		c.namespaces.Store(ns, true)
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return stepError("read namespace "+ns, err)
	}
	if !c.cfg.CreateNamespaces {
		return fmt.Errorf("namespace %q: %w (create it, or run the controller with namespace creation enabled)", ns, ErrNamespaceMissing)
	}
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{render.LabelManagedBy: render.ManagedByValue}}}
	_, err = c.deps.Kube.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{FieldManager: apply.FieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return stepError("create namespace "+ns, err)
	}
	c.namespaces.Store(ns, true)
	return nil
}

// applyChildren applies each desired child in order. A child whose kind is
// not installed (the ScaledObject CRD) does not stop the others; the
// combined error then classifies as waiting.
func (c *Controller) applyChildren(ctx context.Context, desired []*unstructured.Unstructured) ([]api.Child, error) {
	var kids []api.Child
	var waiting error
	for _, obj := range desired {
		var opts []apply.Option
		if live, ok := c.children.get(obj); ok {
			opts = append(opts, apply.KnownLive(live)) // no read when the cache has it
		}
		res, err := c.deps.Applier.Apply(ctx, obj, opts...)
		if errors.Is(err, apply.ErrKindNotInstalled) {
			waiting = err
			continue
		}
		if err != nil {
			c.obs.Applied(apply.Result{Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), Action: apply.Failed})
			return kids, err
		}
		c.obs.Applied(res)
		if res.Wrote() {
			zerolog.Ctx(ctx).Info().Str("object", res.Ref()).Str("action", string(res.Action)).Msg("applied")
		}
		kids = append(kids, api.Child{Kind: res.Kind, Namespace: res.Namespace, Name: res.Name,
			Hash: obj.GetAnnotations()[render.AnnotationContentHash]})
	}
	return kids, waiting
}
