package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/render"
)

// ComponentGVK is the benchmark's CRD: a namespaced Component whose spec is
// tinyctl's api.Spec.
var ComponentGVK = schema.GroupVersionKind{Group: "bench.tinyctl.io", Version: "v1alpha1", Kind: "Component"}

// fieldOwner is the baseline's server-side apply field manager.
const fieldOwner = "tinyctl-crbaseline"

func newComponent() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ComponentGVK)
	return u
}

type reconciler struct {
	client  client.Client
	scheme  *runtime.Scheme
	streams *streams.Manager
	cluster render.Cluster
}

// Reconcile renders the Component, ensures its JetStream objects, applies
// its children (owned by the Component) and reports Ready at its
// generation. It applies every time it runs, as an operator that corrects
// drift does; server-side apply of an unchanged object persists nothing.
func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := newComponent()
	if err := r.client.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	gen := u.GetGeneration()
	c, err := componentOf(u)
	if err != nil {
		return ctrl.Result{}, err
	}
	objs, err := render.Render(c, uint64(gen), r.cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	if _, err := r.streams.EnsureStreamAndConsumer(ctx, objs.Stream, objs.Consumer, streams.EnsureOptions{}); err != nil {
		return ctrl.Result{}, err
	}
	kids, err := objs.Children()
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, k := range kids {
		if err := controllerutil.SetControllerReference(u, k, r.scheme); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(k), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return ctrl.Result{}, fmt.Errorf("%s/%s apply failed: %w", k.GetKind(), k.GetName(), err)
		}
	}
	return ctrl.Result{}, r.ready(ctx, u, gen)
}

// ready patches the status Ready at gen, keeping the condition's
// transition time when it was Ready already (so an unchanged status
// patches nothing).
func (r *reconciler) ready(ctx context.Context, u *unstructured.Unstructured, gen int64) error {
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if observed == gen {
		return nil
	}
	patch := client.MergeFrom(u.DeepCopy())
	now := time.Now().UTC().Format(time.RFC3339)
	if conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); len(conds) == 1 {
		if c, ok := conds[0].(map[string]any); ok && c["status"] == string(api.ConditionTrue) {
			now, _ = c["lastTransitionTime"].(string)
		}
	}
	u.Object["status"] = map[string]any{
		"observedGeneration": gen,
		"conditions": []any{map[string]any{"type": api.ConditionApplied, "status": string(api.ConditionTrue),
			"lastTransitionTime": now}},
	}
	return r.client.Status().Patch(ctx, u, patch)
}

// componentOf reads tinyctl's Component out of the CR.
func componentOf(u *unstructured.Unstructured) (api.Component, error) {
	c := api.Component{APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: u.GetName(), Namespace: u.GetNamespace()}}
	b, err := json.Marshal(u.Object["spec"])
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c.Spec); err != nil {
		return c, fmt.Errorf("%s/%s spec: %w", u.GetNamespace(), u.GetName(), err)
	}
	return defaults.Apply(c), nil
}
