//go:build !noinstall

package main

import (
	"crypto/rand"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision"
)

// kedaChart is a minimal chart named keda at version: one ConfigMap.
func kedaChart(version string) map[string]string {
	return map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: keda\nversion: " + version + "\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keda-test\n" +
			"data:\n  version: " + version + "\n",
	}
}

// kedaRelease returns the chart version of the deployed KEDA release in ns,
// read the way the helm command reads it, and its runtime label.
func kedaRelease(t *testing.T, ns string) (version, runtime string) {
	t.Helper()
	rel, err := storage.Init(driver.NewSecrets(kube.Clientset(t).CoreV1().Secrets(ns))).Deployed(provision.KEDA(provision.KEDAOptions{}).Name)
	if err != nil {
		t.Fatalf("KEDA release in %s: %v", ns, err)
	}
	return rel.Chart.Metadata.Version, rel.Labels[provision.LabelRuntime]
}

// TestInstallWithKEDA installs KEDA with the runtime from a chart
// repository that also offers a newer version (the pinned one is taken),
// then moves it with --keda-version, a packaged chart and a chart
// directory, checking the release Helm recorded each time.
func TestInstallWithKEDA(t *testing.T) {
	u := &user{t: t, home: t.TempDir()}
	id := strings.ToLower(rand.Text()[:8])
	ns, kedaNS := "rt-"+id, "keda-"+id
	srv := testenv.ChartRepo(t, kedaChart(provision.KEDAVersion), kedaChart("9.9.9"))
	tgz := testenv.PackageChart(t, kedaChart("10.0.0"), t.TempDir())
	dir := testenv.ChartDir(t, kedaChart("10.0.1"))
	base := []string{"install", "--kubeconfig", kube.Kubeconfig, "--runtime-namespace", ns, "--without-collector",
		"--with-keda", "--keda-namespace", kedaNS}
	t.Cleanup(func() { u.run("uninstall", "--kubeconfig", kube.Kubeconfig, "--runtime-namespace", ns) })

	steps := []struct {
		name, want, action string
		args               []string
	}{
		{"pinned version from the repository", provision.KEDAVersion, "created", []string{"--keda-repo", srv.URL}},
		{"--keda-version", "9.9.9", "upgraded", []string{"--keda-repo", srv.URL, "--keda-version", "9.9.9"}},
		{"--keda-chart-dir with a packaged chart", "10.0.0", "upgraded", []string{"--keda-chart-dir", tgz}},
		{"--keda-chart-dir with a directory", "10.0.1", "upgraded", []string{"--keda-chart-dir", dir}},
	}
	for _, s := range steps {
		r := u.must(append(base, s.args...)...)
		line := "Release/" + kedaNS + "/keda " + s.action + " (keda-" + s.want
		if !strings.Contains(r.stdout, line) {
			t.Fatalf("%s: output lacks %q:\n%s", s.name, line, r)
		}
		if v, rt := kedaRelease(t, kedaNS); v != s.want || rt != ns {
			t.Errorf("%s: deployed KEDA release is chart %s labelled runtime %q, want %s of runtime %s", s.name, v, rt, s.want, ns)
		}
	}
}

// TestInstallKEDAUsageErrors checks KEDA flag mistakes exit 2 before
// touching a cluster.
func TestInstallKEDAUsageErrors(t *testing.T) {
	u := &user{t: t, home: t.TempDir()}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--keda-version", "2.0.0"}, "need --with-keda"},
		{[]string{"--with-keda", "--keda-chart-dir", filepath.Join(t.TempDir(), "keda.tgz"), "--keda-version", "2.0.0"}, "cannot be combined"},
	} {
		r := u.run(append([]string{"install", "--kubeconfig", kube.Kubeconfig}, tt.args...)...)
		expect(t, r, exitUsage, nil, []string{tt.want})
	}
}
