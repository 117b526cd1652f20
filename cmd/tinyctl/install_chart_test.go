package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/deploy"
)

// TestControllerChartArgsParse renders the controller chart's Deployment
// and parses its container args with the real `tinyctl serve` command: the
// chart passes only flags serve knows, in forms it accepts.
func TestControllerChartArgsParse(t *testing.T) {
	values := map[string]any{
		"clusterLabels":    map[string]any{"region": "eu", "tier": "gold"},
		"namespaces":       []any{"team-a", "team-b"},
		"nats":             map[string]any{"credentialsSecret": "nats-creds"},
		"keda":             map[string]any{"account": "$G"},
		"createNamespaces": false,
		"hubDomain":        "hub",
		"kube":             map[string]any{"qps": 2.5, "burst": 100.0}, // numbers as a values file gives them
	}
	args := controllerArgs(t, values)
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("controller args %v do not start with serve", args)
	}
	root := newRootCmd(os.Stdout, os.Stderr)
	serve, rest, err := root.Find(args)
	if err != nil || serve.Name() != "serve" {
		t.Fatalf("find serve: %v", err)
	}
	if err := serve.ParseFlags(rest); err != nil {
		t.Fatalf("serve rejects the chart's args %v: %v", args, err)
	}
	for flag, want := range map[string]string{
		"cluster-labels": "[region=eu,tier=gold]",
		"namespaces":     "[team-a,team-b]",
		"nats-url":       "nats://nats.tinyctl-system.svc:4222",
		"log-format":     "json",
		"hub-domain":     "hub",
		"kube-qps":       "2.5",
		"kube-burst":     "100",
	} {
		if got := serve.Flags().Lookup(flag).Value.String(); got != want {
			t.Errorf("--%s = %q, want %q", flag, got, want)
		}
	}
}

// controllerArgs renders the embedded tinyctl chart with values and
// returns the controller container's args.
func controllerArgs(t *testing.T, values map[string]any) []string {
	t.Helper()
	dep := controllerDeployment(t, values)
	return dep.Spec.Template.Spec.Containers[0].Args
}

// controllerDeployment renders the embedded tinyctl chart with values and
// returns its Deployment.
func controllerDeployment(t *testing.T, values map[string]any) appsv1.Deployment {
	t.Helper()
	out := renderController(t, "tinyctl-system", values)
	var dep appsv1.Deployment
	if err := yaml.Unmarshal([]byte(out["tinyctl/templates/deployment.yaml"]), &dep); err != nil {
		t.Fatal(err)
	}
	return dep
}

// renderController renders the embedded tinyctl chart as release tinyctl
// in namespace ns with values, and returns the manifests by template path.
func renderController(t *testing.T, ns string, values map[string]any) map[string]string {
	t.Helper()
	sub, err := fs.Sub(deploy.Charts, "charts/tinyctl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "tinyctl")
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := chartutil.ReleaseOptions{Name: "tinyctl", Namespace: ns, IsInstall: true, Revision: 1}
	vals, err := chartutil.ToRenderValues(ch, values, opts, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
