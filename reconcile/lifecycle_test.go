package reconcile_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/serve/wire"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

func scaled(c *api.Component) {
	c.Spec.Scaling = &api.Scaling{MinReplicas: 0, MaxReplicas: 5}
}

// ownsReplicas reports whether tinyctl's apply entry owns spec.replicas.
func ownsReplicas(d *unstructured.Unstructured) bool {
	for _, mf := range d.GetManagedFields() {
		if mf.Manager == "tinyctl" && mf.Subresource == "" && mf.FieldsV1 != nil &&
			strings.Contains(string(mf.FieldsV1.GetRawBytes()), `"f:replicas"`) {
			return true
		}
	}
	return false
}

func TestComponentLifecycle(t *testing.T) {
	withScaledObjectCRD(t)
	e := newEnv(t, reconcile.Config{})
	e.start()
	comp := e.component("extractor", scaled)
	rev := e.publish(comp)

	// Publish: everything render produces exists.
	objs, err := render.Render(defaults.Apply(comp), rev, e.cfg.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	e.waitStatus("extractor", api.ConditionApplied, "True", rev)
	if err := contains(objs.Deployment, e.get(deployments, "extractor")); err != nil {
		t.Errorf("Deployment differs from render: %v", err)
	}
	if err := contains(objs.NetworkPolicy, e.get(networkPolicies, "extractor")); err != nil {
		t.Errorf("NetworkPolicy differs from render: %v", err)
	}
	if err := subset("", objs.ScaledObject.Object, e.get(scaledObjects, "extractor").Object); err != nil {
		t.Errorf("ScaledObject differs from render: %v", err)
	}
	st := e.stream("extractor")
	if st == nil || !slices.Equal(st.Config.Subjects, objs.Stream.Subjects) {
		t.Fatalf("stream = %+v, want subjects %v", st, objs.Stream.Subjects)
	}
	if _, err := e.js.Consumer(context.Background(), objs.Stream.Name, objs.Consumer.Durable); err != nil {
		t.Fatalf("consumer %s: %v", objs.Consumer.Durable, err)
	}
	if ownsReplicas(e.get(deployments, "extractor")) {
		t.Error("tinyctl owns spec.replicas of a KEDA-scaled Deployment")
	}

	// Change the image: only the Deployment is written.
	mark := kube.AuditMark(t)
	comp.Spec.Image = "registry.example.com/acme/extractor:1.0.1"
	rev = e.publish(comp)
	e.waitStatus("extractor", api.ConditionApplied, "True", rev)
	e.waitFor(deployments, "extractor", imageIs(comp.Spec.Image))
	if w := kubeWrites(t, mark, e.ns); w["deployments"] != 1 || len(w) != 1 {
		t.Errorf("writes after an image change = %v, want only deployments: 1", w)
	}

	// Remove scaling: the ScaledObject is pruned and replicas owned again.
	comp.Spec.Scaling = nil
	rev = e.publish(comp)
	e.waitStatus("extractor", api.ConditionApplied, "True", rev)
	e.waitGone(scaledObjects, "extractor")
	if !ownsReplicas(e.get(deployments, "extractor")) {
		t.Error("tinyctl does not own spec.replicas once scaling is removed")
	}

	// Delete: children go, the stream stays (deletion.stream defaults to Retain).
	if err := e.specs.Delete(context.Background(), api.KeyOf(defaults.Apply(comp)), 0); err != nil {
		t.Fatal(err)
	}
	e.waitGone(deployments, "extractor")
	e.waitGone(networkPolicies, "extractor")
	testenv.Eventually(t, 10*time.Second, func() error {
		if _, err := e.status("extractor"); err == nil {
			return fmt.Errorf("status record still present")
		}
		return nil
	})
	if e.stream("extractor") == nil {
		t.Error("stream deleted although deletion.stream is Retain")
	}
}

func TestDeleteWithStreamPolicyDeleteRemovesTheStream(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.start()
	comp := e.component("exporter", func(c *api.Component) { c.Spec.Deletion.Stream = api.Delete })
	rev := e.publish(comp)
	e.waitStatus("exporter", api.ConditionApplied, "True", rev)
	if e.stream("exporter") == nil {
		t.Fatal("stream not created")
	}
	if err := e.specs.Delete(context.Background(), api.Key(e.ns, "exporter"), 0); err != nil {
		t.Fatal(err)
	}
	e.waitGone(deployments, "exporter")
	testenv.Eventually(t, 10*time.Second, func() error {
		if e.stream("exporter") != nil {
			return fmt.Errorf("stream still exists")
		}
		return nil
	})
}

func imageIs(image string) func(*unstructured.Unstructured) error {
	return func(d *unstructured.Unstructured) error {
		ctrs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		if len(ctrs) == 0 {
			return fmt.Errorf("no containers")
		}
		if got := ctrs[0].(map[string]any)["image"]; got != image {
			return fmt.Errorf("image %v, want %s", got, image)
		}
		return nil
	}
}

// TestAControllerStoppedWhileStartingStopsCleanly: Run with a context
// that ends before its informers and watch are up returns nil, as a
// SIGTERM during start should, not "cache did not sync".
func TestAControllerStoppedWhileStartingStopsCleanly(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	a, err := apply.New(kube.Config, render.AnnotationContentHash)
	testenv.Must(t, err)
	deps, err := wire.Deps(e.specs, e.statuses, streams.New(e.conn, 0), a, kube.Config, nil)
	testenv.Must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := reconcile.New(e.cfg, deps).Run(ctx); err != nil {
		t.Fatalf("Run stopped before it started: %v, want nil", err)
	}
}
