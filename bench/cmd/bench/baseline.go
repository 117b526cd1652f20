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

// runBaseline measures the controller-runtime baseline's cold convergence
// as runCold measures serve's: n Components created before the operator
// starts, timed from its process start until every one reports Ready at
// its generation.
func (b *bench) runBaseline(ctx context.Context, n, round int) (coldResult, error) {
	r := coldResult{N: n, Round: round, Variant: "controller-runtime"}
	e, err := newEnv(ctx, b.log)
	if err != nil {
		return r, err
	}
	defer e.close(ctx)
	dyn, err := e.createComponents(ctx, n)
	if err != nil {
		return r, err
	}
	b.logf("%s: %d Components created; starting the operator", r.Variant, n)
	p, err := startProc(filepath.Join(b.out, fmt.Sprintf("crbaseline-%d-r%d.log", n, round)), b.crBin,
		"-kubeconfig", e.cp.Kubeconfig, "-nats-url", e.nats.ClientURL(), "-workers", fmt.Sprint(b.workers))
	if err != nil {
		return r, err
	}
	defer func() { _ = p.stop() }()
	if err := waitComponentsReady(ctx, dyn, n, b.timeout, p); err != nil {
		return r, fmt.Errorf("%s, %d components: %w", r.Variant, n, err)
	}
	r.Time = time.Since(p.started)
	u, err := p.usage()
	if err != nil {
		return r, err
	}
	r.CPU, r.PeakRSS = u.CPU, u.PeakRSS
	b.logf("%s: %d components converged in %s", r.Variant, n, r.Time.Round(time.Millisecond))
	return r, e.verify(ctx, n)
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
		c := component(i)
		b, err := json.Marshal(c.Spec)
		if err != nil {
			return err
		}
		var spec map[string]any
		if err := json.Unmarshal(b, &spec); err != nil {
			return err
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": componentsGVR.GroupVersion().String(), "kind": "Component",
			"metadata": map[string]any{"name": c.Metadata.Name, "namespace": c.Metadata.Namespace},
			"spec":     spec,
		}}
		_, err = res.Namespace(benchNamespace).Create(ctx, obj, metav1.CreateOptions{})
		return err
	})
	return res, err
}

// waitComponentsReady follows the Components (a list, then a watch, again
// when the watch ends) until n report Ready at their generation.
func waitComponentsReady(ctx context.Context, res dynamic.NamespaceableResourceInterface, n int,
	within time.Duration, p *proc) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	ready := map[string]bool{}
	note := func(u *unstructured.Unstructured) {
		obs, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		ready[u.GetName()] = obs == u.GetGeneration()
	}
	count := func() int {
		k := 0
		for _, r := range ready {
			if r {
				k++
			}
		}
		return k
	}
	for {
		if err := p.alive(); err != nil {
			return err
		}
		list, err := res.Namespace(benchNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range list.Items {
			note(&list.Items[i])
		}
		if count() >= n {
			return nil
		}
		w, err := res.Namespace(benchNamespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			return err
		}
		if done, err := follow(w, p, note, func() bool { return count() >= n }); done || err != nil {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %d of %d ready", ctx.Err(), count(), n)
		}
	}
}

// follow hands w's objects to note until enough says so (true), the watch
// ends (false), or p exits (its error).
func follow(w watch.Interface, p *proc, note func(*unstructured.Unstructured), enough func() bool) (bool, error) {
	defer w.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type != watch.Error {
				note(u)
			}
			if enough() {
				return true, nil
			}
		case <-p.exited:
			return false, p.alive()
		}
	}
}
