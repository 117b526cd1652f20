package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/deploy"
	"github.com/tinyctl/tinyctl/render"
)

// InstallFence installs the write fence the controller chart ships (its
// templates/fence.yaml, rendered with the chart's defaults: a
// ValidatingAdmissionPolicy and its binding) and waits until the API
// server enforces it: a write with an older fencing token is refused.
// It stays for the rest of the package's tests; it concerns only objects
// labelled as tinyctl's whose writes carry tokens.
func (k *Kube) InstallFence(tb testing.TB) {
	tb.Helper()
	m := k.Manager(tb)
	ctx := Ctx(tb, time.Minute)
	for _, obj := range fenceObjects(tb) {
		if _, err := m.Apply(ctx, obj); err != nil {
			tb.Fatalf("install the fence: %v", err)
		}
	}
	k.waitFenced(tb, ctx)
}

// fenceObjects renders the controller chart's fence template.
func fenceObjects(tb testing.TB) []*unstructured.Unstructured {
	tb.Helper()
	root, err := fs.Sub(deploy.Charts, "charts/tinyctl")
	Must(tb, err)
	var files []*loader.BufferedFile
	Must(tb, fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(root, p)
		files = append(files, &loader.BufferedFile{Name: p, Data: data})
		return err
	}))
	ch, err := loader.LoadFiles(files)
	Must(tb, err)
	vals, err := chartutil.ToRenderValues(ch, nil, chartutil.ReleaseOptions{Name: "tinyctl", Namespace: "tinyctl-system", IsInstall: true}, nil)
	Must(tb, err)
	out, err := engine.Render(ch, vals)
	Must(tb, err)
	var objs []*unstructured.Unstructured
	for _, doc := range bytes.Split([]byte(out[path.Join(ch.Name(), "templates", "fence.yaml")]), []byte("\n---")) {
		if strings.TrimSpace(string(doc)) == "" {
			continue
		}
		obj := &unstructured.Unstructured{}
		Must(tb, yaml.Unmarshal(doc, &obj.Object))
		objs = append(objs, obj)
	}
	if len(objs) != 2 {
		tb.Fatalf("the chart's fence template rendered %d objects, want a policy and its binding", len(objs))
	}
	return objs
}

// waitFenced polls until a write of a tinyctl Secret with an older token
// than the stored one is refused (a policy takes a moment to be loaded).
// Tokens here are four digits, compared as the policy compares strings.
func (k *Kube) waitFenced(tb testing.TB, ctx context.Context) {
	tb.Helper()
	m := k.Manager(tb)
	probe := func(token int) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "tinyctl-fence-probe", "namespace": metav1.NamespaceDefault,
				"labels": map[string]any{render.LabelManagedBy: render.ManagedByValue},
				"annotations": map[string]any{render.AnnotationContentHash: fmt.Sprint(token),
					apply.AnnotationFence: fmt.Sprintf("%04d", token)}}}}
	}
	if _, err := m.Apply(ctx, probe(9999)); err != nil {
		tb.Fatalf("fence probe: %v", err)
	}
	older := 9999
	EventuallyEvery(tb, 30*time.Second, 100*time.Millisecond, func() error {
		older-- // below the stored token, whether or not the last write was refused
		switch _, err := m.Apply(ctx, probe(older)); {
		case err == nil:
			return errors.New("a write with an older token was accepted: the fence is not enforced yet")
		case !errors.Is(err, apply.ErrFenced):
			return fmt.Errorf("fence probe: %w", err)
		}
		return nil
	})
	if _, err := m.Delete(ctx, corev1.SchemeGroupVersion.WithKind("Secret"), metav1.NamespaceDefault, "tinyctl-fence-probe"); err != nil {
		tb.Fatalf("fence probe: %v", err)
	}
}
