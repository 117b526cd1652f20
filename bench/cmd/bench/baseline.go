package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/api"
)

// componentCRD is the baseline's CRD (cmd/crbaseline): spec is tinyctl's
// api.Spec, kept as it is; status is the baseline's.
const componentCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: components.bench.tinyctl.io}
spec:
  group: bench.tinyctl.io
  scope: Namespaced
  names: {plural: components, singular: component, kind: Component, listKind: ComponentList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

var componentsGVR = schema.GroupVersionResource{Group: "bench.tinyctl.io", Version: "v1alpha1", Resource: "components"}

// baselineVariant is one configuration of the controller-runtime baseline.
type baselineVariant struct {
	name string
	args []string
}

// baselines are B0, controller-runtime's defaults (one reconcile at a
// time, every event reconciled, no client-side limit), and B1, tinyctl's
// worker count, a generation-changed predicate and serve's client-side
// limits (none by default; limits are the driver's -baseline-limits).
func (b *bench) baselines(limits []string) []baselineVariant {
	b1 := append([]string{"-workers", fmt.Sprint(b.workers), "-generation-changed"}, limits...)
	return []baselineVariant{{"controller-runtime B0", nil}, {"controller-runtime B1", b1}}
}

// runBaseline measures the controller-runtime baseline's cold convergence
// as runCold measures serve's: n Components created before the operator
// starts, timed from its process start until every one reports Ready at
// its generation. When then is not nil it runs on the converged env and
// process before they are torn down.
func (b *bench) runBaseline(ctx context.Context, n, round int, v baselineVariant,
	then func(*env, *proc, *crTracker) error) (coldResult, error) {
	r := coldResult{N: n, Round: round, Variant: v.name}
	e, err := b.newEnv(ctx)
	if err != nil {
		return r, err
	}
	defer e.close(ctx)
	res, err := e.createComponents(ctx, n)
	if err != nil {
		return r, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := e.trackComponents(ctx, res)
	want := map[string]uint64{}
	for i := range n {
		want[api.KeyOf(component(i))] = 1
	}
	b.logf("%s: %d Components created; starting the operator", r.Variant, n)
	defer b.partsProfiles(e, fmt.Sprintf("%d-%s-r%d.pb.gz", n, slug(v.name), round))()
	r.machine0 = readMachine()
	p, err := b.startBaseline(e, fmt.Sprintf("%s-%d-r%d", slug(v.name), n, round), v.args)
	if err != nil {
		return r, err
	}
	defer func() { _ = p.stop() }()
	if err := t.waitAllReady(ctx, want, b.timeout, p.alive); err != nil {
		return r, fmt.Errorf("%s, %d components: %w", r.Variant, n, err)
	}
	if err := b.finishCold(ctx, e, p, &r); err != nil {
		return r, err
	}
	if then != nil {
		return r, then(e, p, t)
	}
	return r, nil
}

// startBaseline starts the baseline against e as its ServiceAccount, with
// its metrics on a free loopback port.
func (b *bench) startBaseline(e *env, logName string, args []string) (*proc, error) {
	addrs, err := freeAddrs(1)
	if err != nil {
		return nil, err
	}
	args = append([]string{"-kubeconfig", e.controllerKubeconfig, "-nats-url", e.nats.ClientURL(),
		"-metrics-addr", addrs[0]}, args...)
	p, err := startProc(filepath.Join(b.out, logName+".log"), b.crBin, args...)
	if err != nil {
		return nil, err
	}
	p.metrics, p.counters = addrs[0], controllerRuntimeCounters
	return p, nil
}

// createComponents installs the CRD and creates Components 0..n-1.
func (e *env) createComponents(ctx context.Context, n int) (dynamic.NamespaceableResourceInterface, error) {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(componentCRD), &crd.Object); err != nil {
		return nil, err
	}
	if _, err := e.kube.Apply(ctx, crd); err != nil {
		return nil, err
	}
	if err := e.kube.WaitEstablished(ctx, crd.GetName(), time.Minute); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(e.cp.Config)
	cfg.QPS = -1
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	res := client.Resource(componentsGVR)
	err = parallel(n, 8, func(i int) error {
		_, _, err := putComponent(ctx, res, component(i))
		return err
	})
	return res, err
}

// crTracker follows the Components (a list, then a watch, again when the
// watch ends) and notes each generation reported Ready
// (status.observedGeneration), keyed like serve's components.
type crTracker struct {
	seenLog
	res dynamic.NamespaceableResourceInterface
}

func (e *env) trackComponents(ctx context.Context, res dynamic.NamespaceableResourceInterface) *crTracker {
	t := &crTracker{seenLog: seenLog{ready: map[string][]readySeen{}}, res: res}
	go t.run(ctx)
	return t
}

func (t *crTracker) run(ctx context.Context) {
	last := map[string]int64{}
	note := func(u *unstructured.Unstructured) {
		obs, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if key := api.Key(u.GetNamespace(), u.GetName()); obs > last[key] {
			last[key] = obs
			t.saw(key, uint64(obs))
		}
	}
	for ctx.Err() == nil {
		list, err := t.res.Namespace(benchNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			time.Sleep(100 * time.Millisecond) // the API server is away: try again shortly
			continue
		}
		for i := range list.Items {
			note(&list.Items[i])
		}
		w, err := t.res.Namespace(benchNamespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type != watch.Error {
				note(u)
			}
		}
	}
}

// putComponent server-side applies c as a Component (the driver's field
// manager) and returns its key and generation: what a user's kubectl apply
// does.
func putComponent(ctx context.Context, res dynamic.NamespaceableResourceInterface, c api.Component) (string, uint64, error) {
	obj, err := componentObject(c)
	if err != nil {
		return "", 0, err
	}
	out, err := res.Namespace(c.Metadata.Namespace).Apply(ctx, c.Metadata.Name, obj,
		metav1.ApplyOptions{FieldManager: "tinyctl-bench", Force: true})
	if err != nil {
		return "", 0, fmt.Errorf("apply Component %s: %w", c.Metadata.Name, err)
	}
	return api.KeyOf(c), uint64(out.GetGeneration()), nil
}

// componentObject is c as a bench.tinyctl.io Component.
func componentObject(c api.Component) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(c.Spec)
	if err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": componentsGVR.GroupVersion().String(), "kind": "Component",
		"metadata": map[string]any{"name": c.Metadata.Name, "namespace": c.Metadata.Namespace},
		"spec":     spec,
	}}, nil
}

// baselineTarget is baseline variant v on e: Components applied as a user
// would, their status followed by t.
func (b *bench) baselineTarget(e *env, t *crTracker, v baselineVariant, n int) target {
	return target{
		system: v.name,
		put: func(ctx context.Context, c api.Component) (string, uint64, error) {
			return putComponent(ctx, t.res, c)
		},
		ready: t, agent: baselineAgent,
		start: func(what string) (*proc, error) {
			return b.startBaseline(e, fmt.Sprintf("%s-%d-%s", slug(v.name), n, what), v.args)
		},
	}
}
