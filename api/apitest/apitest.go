// Package apitest holds the component documents the api packages' tests
// share.
package apitest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// MinimalYAML is the smallest valid component: a name, an image and one
// subject; everything else takes its default.
const MinimalYAML = `apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: extractor, namespace: workers}
spec:
  image: registry.example.com/acme/extractor:1.4.2
  jobs: {subjects: ["jobs.extract.>"]}
`

// ExampleFiles returns the component files under the repository's
// examples/ directory, by file name.
func ExampleFiles(tb testing.TB) map[string][]byte {
	tb.Helper()
	_, self, _, _ := runtime.Caller(0)
	paths, err := filepath.Glob(filepath.Join(filepath.Dir(self), "..", "..", "examples", "*.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(paths) == 0 {
		tb.Fatal("no files in examples/")
	}
	out := make(map[string][]byte, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}
