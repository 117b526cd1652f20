package provision_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision"
)

// demoChart is chart "demo" 1.2.3: one ConfigMap with a greeting.
var demoChart = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: demo\nversion: 1.2.3\nappVersion: \"1.0\"\n",
	"values.yaml": "greeting: hello\n",
	"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n" +
		"data:\n  greeting: {{ .Values.greeting | quote }}\n",
}

// privilegedChart is chart "privileged" 0.1.0: a Deployment whose pod
// violates every Pod Security level.
var privilegedChart = map[string]string{
	"Chart.yaml": "apiVersion: v2\nname: privileged\nversion: 0.1.0\n",
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: privileged
spec:
  selector: {matchLabels: {app: privileged}}
  template:
    metadata: {labels: {app: privileged}}
    spec:
      containers: [{name: p, image: busybox, securityContext: {privileged: true}}]
`,
}

// TestInstallFromRepository installs a chart from a repository served in
// the test, as `--repo URL --chart NAME --version V` does.
func TestInstallFromRepository(t *testing.T) {
	srv := testenv.ChartRepo(t, demoChart)
	r := newRuntime(t, provision.Options{})
	ctx := context.Background()
	if _, err := r.p.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	rel := provision.Release{
		Name:   provision.SanitizeResourceName("tinysystems/http-module-v0"),
		Chart:  provision.Chart{RepoURL: srv.URL, Name: "demo", Version: "1.2.3"},
		Values: map[string]any{"greeting": "hi"},
	}
	res, err := r.p.InstallRelease(ctx, rel)
	if err != nil {
		t.Fatalf("install from repository: %v", err)
	}
	if res.Action != action.Created || res.Chart != "demo-1.2.3" || res.Name != "tinysystems-http-module-v0" {
		t.Errorf("result = %s, want release tinysystems-http-module-v0 created from demo-1.2.3", res)
	}
	cm := r.get(objectRef{resources["ConfigMap"], "ConfigMap", r.ns, rel.Name})
	if cm == nil || cm.Object["data"].(map[string]any)["greeting"] != "hi" {
		t.Fatalf("the chart's ConfigMap is missing or wrong: %v", cm)
	}
	if res, err := r.p.InstallRelease(ctx, rel); err != nil || res.Action != action.Unchanged {
		t.Errorf("second install = %s, %v; want unchanged", res, err)
	}
}

// TestRepositoryErrors checks a chart that cannot be fetched gives an
// error that says which chart, from where, and why.
func TestRepositoryErrors(t *testing.T) {
	srv := testenv.ChartRepo(t, demoChart)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	r := newRuntime(t, provision.Options{})
	tests := []struct {
		name  string
		chart provision.Chart
		want  []string
	}{
		{"unreachable repository", provision.Chart{RepoURL: gone.URL, Name: "demo", Version: "1.2.3"},
			[]string{"chart demo 1.2.3 from " + gone.URL, "chart unavailable", "connection refused"}},
		{"version not in the repository", provision.Chart{RepoURL: srv.URL, Name: "demo", Version: "9.9.9"},
			[]string{"chart demo 9.9.9 from " + srv.URL, "chart unavailable", "9.9.9"}},
		{"chart not in the repository", provision.Chart{RepoURL: srv.URL, Name: "nope"},
			[]string{"chart nope (newest) from " + srv.URL, "chart unavailable", "nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.p.InstallRelease(context.Background(), provision.Release{Name: "demo", Chart: tt.chart})
			t.Log(err)
			if !errors.Is(err, provision.ErrChartUnavailable) {
				t.Fatalf("error = %v, want ErrChartUnavailable", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
