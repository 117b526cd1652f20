package testenv

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/repo"
)

// ChartRepo serves a Helm chart repository over HTTP on loopback: each
// chart (its files by path, Chart.yaml included) packaged, and their
// index.yaml, all made by the Helm SDK. The server stops when the test
// ends.
func ChartRepo(tb testing.TB, charts ...map[string]string) *httptest.Server {
	tb.Helper()
	dir := tb.TempDir()
	for _, files := range charts {
		PackageChart(tb, files, dir)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	tb.Cleanup(srv.Close)
	index, err := repo.IndexDirectory(dir, srv.URL)
	if err != nil {
		tb.Fatal(err)
	}
	if err := index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return srv
}

// ChartDir writes a chart's files (by path) into a new directory and
// returns it.
func ChartDir(tb testing.TB, files map[string]string) string {
	tb.Helper()
	src := filepath.Join(tb.TempDir(), "chart")
	for name, text := range files {
		path := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return src
}

// PackageChart packages a chart's files into dir, as `helm package` does,
// and returns the archive's path.
func PackageChart(tb testing.TB, files map[string]string, dir string) string {
	tb.Helper()
	pkg := action.NewPackage()
	pkg.Destination = dir
	path, err := pkg.Run(ChartDir(tb, files), nil)
	if err != nil {
		tb.Fatalf("package chart: %v", err)
	}
	return path
}
