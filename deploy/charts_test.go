package deploy_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/deploy"
)

var chartNames = []string{"tinyctl", "nats", "collector"}

// chartDir copies the embedded chart name into a temporary directory, the
// way `tinyctl install` hands it to Helm.
func chartDir(t *testing.T, name string) string {
	t.Helper()
	sub, err := fs.Sub(deploy.Charts, "charts/"+name)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, sub); err != nil {
		t.Fatalf("extract chart %s: %v", name, err)
	}
	return dir
}

// TestChartsAreEmbedded checks every chart directory made it into the
// binary, helpers included.
func TestChartsAreEmbedded(t *testing.T) {
	for _, name := range chartNames {
		for _, f := range []string{"Chart.yaml", "values.yaml", "values.schema.json", "templates/_helpers.tpl"} {
			if _, err := fs.Stat(deploy.Charts, "charts/"+name+"/"+f); err != nil {
				t.Errorf("chart %s: %v", name, err)
			}
		}
	}
}

// TestChartsLintClean runs Helm's linter on every chart, with its default
// values and with the values that switch its other branches on, and wants
// no message at all (not even INFO).
func TestChartsLintClean(t *testing.T) {
	cases := []struct {
		chart  string
		values map[string]any
	}{
		{"tinyctl", nil},
		{"tinyctl", map[string]any{"namespaces": []any{"team-a", "team-b"}}},
		{"tinyctl", map[string]any{"createNamespaces": true, "clusterLabels": map[string]any{"region": "eu"}}},
		{"tinyctl", monitoringOn},
		{"tinyctl", map[string]any{"replicas": 1}},
		{"nats", nil},
		{"nats", map[string]any{"auth": map[string]any{"enabled": false}, "storage": map[string]any{"storageClassName": "fast"}}},
		{"collector", nil},
	}
	for _, tc := range cases {
		t.Run(tc.chart, func(t *testing.T) {
			l := lint.AllWithKubeVersion(chartDir(t, tc.chart), tc.values, "tinyctl-system", nil)
			for _, m := range l.Messages {
				t.Errorf("values %v: %s", tc.values, m)
			}
		})
	}
}

// render renders chart name as release name in namespace tinyctl-system
// and returns the non-empty manifests by template path.
func render(t *testing.T, name string, values map[string]any) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir(t, name))
	if err != nil {
		t.Fatal(err)
	}
	opts := chartutil.ReleaseOptions{Name: name, Namespace: "tinyctl-system", IsInstall: true, Revision: 1}
	vals, err := chartutil.ToRenderValues(ch, values, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	for k, v := range out {
		if strings.TrimSpace(v) == "" {
			delete(out, k)
		}
	}
	return out, nil
}

// documents splits rendered manifests into YAML documents, decoded.
func documents(t *testing.T, manifests map[string]string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for path, m := range manifests {
		if strings.HasSuffix(path, ".txt") {
			continue
		}
		for _, doc := range strings.Split(m, "\n---") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if obj != nil {
				out = append(out, obj)
			}
		}
	}
	return out
}

// TestControllerRBAC checks the controller's permissions as rendered:
// cluster-wide by default, one Role per namespace when namespaces are
// listed, create namespaces only when asked, and never a wildcard, a
// Secret, a ConfigMap, a Pod or a Lease.
func TestControllerRBAC(t *testing.T) {
	cases := []struct {
		name      string
		values    map[string]any
		wantKinds []string
		nsVerbs   []string
	}{
		{"cluster-wide", nil, []string{"ClusterRole", "ClusterRoleBinding"}, []string{"get"}},
		{"create namespaces", map[string]any{"createNamespaces": true}, []string{"ClusterRole", "ClusterRoleBinding"}, []string{"get", "create"}},
		{"listed namespaces", map[string]any{"namespaces": []any{"team-a", "team-b"}},
			[]string{"Role", "Role", "RoleBinding", "RoleBinding"}, []string{"get"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := render(t, "tinyctl", tc.values)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, obj := range documents(t, out) {
				kind, _ := obj["kind"].(string)
				if !strings.Contains(kind, "Role") {
					continue
				}
				kinds = append(kinds, kind)
				if kind == "Role" || kind == "ClusterRole" {
					checkRules(t, obj, tc.nsVerbs)
				}
			}
			slices.Sort(kinds)
			if !slices.Equal(kinds, tc.wantKinds) {
				t.Errorf("RBAC kinds = %v, want %v", kinds, tc.wantKinds)
			}
		})
	}
}

func checkRules(t *testing.T, obj map[string]any, nsVerbs []string) {
	t.Helper()
	b, _ := yaml.Marshal(obj)
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatal(err)
	}
	managed := []string{"get", "list", "watch", "create", "patch", "delete"}
	for _, r := range role.Rules {
		for _, s := range slices.Concat(r.APIGroups, r.Resources, r.Verbs) {
			if s == "*" {
				t.Errorf("rule %+v has a wildcard", r)
			}
		}
		for _, res := range r.Resources {
			switch res {
			case "deployments", "networkpolicies", "scaledobjects":
				if !slices.Equal(r.Verbs, managed) {
					t.Errorf("%s verbs = %v, want %v", res, r.Verbs, managed)
				}
			case "namespaces":
				if !slices.Equal(r.Verbs, nsVerbs) {
					t.Errorf("namespaces verbs = %v, want %v", r.Verbs, nsVerbs)
				}
			default:
				t.Errorf("rule grants %s, which the controller does not use", res)
			}
		}
	}
}

// TestControllerRefusesNamespacesWithCreate checks the chart refuses a
// namespaced controller that may create namespaces: a Role cannot grant
// that.
func TestControllerRefusesNamespacesWithCreate(t *testing.T) {
	_, err := render(t, "tinyctl", map[string]any{"namespaces": []any{"a"}, "createNamespaces": true})
	if err == nil || !strings.Contains(err.Error(), "createNamespaces cannot be combined with namespaces") {
		t.Fatalf("render error = %v, want the chart's refusal", err)
	}
}

// TestControllerArgs checks the chart passes `tinyctl serve` the flags it
// takes, with defaults pointing at the broker in the release namespace and
// the token coming from a secretKeyRef.
func TestControllerArgs(t *testing.T) {
	out, err := render(t, "tinyctl", map[string]any{"clusterLabels": map[string]any{"zone": "b", "region": "eu"}})
	if err != nil {
		t.Fatal(err)
	}
	m := out["tinyctl/templates/deployment.yaml"]
	for _, want := range []string{
		"- serve",
		"- --nats-url=nats://nats.tinyctl-system.svc:4222",
		"- --worker-nats-url=nats://nats.tinyctl-system.svc:4222",
		"- --nats-namespace=tinyctl-system",
		"- --nats-pod-labels=app.kubernetes.io/name=nats",
		"- --cluster-labels=region=eu,zone=b",
		"- --keda-monitoring-endpoint=nats.tinyctl-system.svc:8222",
		"- --metrics-addr=:9090",
		"- --health-addr=:8081",
		"name: TINYCTL_NATS_TOKEN",
		"name: nats-auth",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("deployment lacks %q:\n%s", want, m)
		}
	}
}
