package api

import (
	"os"
	"path/filepath"
	"testing"
)

// exampleFiles returns the component files under examples/, by file name.
func exampleFiles(tb testing.TB) map[string][]byte {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
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

func TestExamplesAreValid(t *testing.T) {
	for name, data := range exampleFiles(t) {
		t.Run(name, func(t *testing.T) {
			c, err := Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if err := ValidationError(Validate(Default(c))); err != nil {
				t.Fatal(err)
			}
			if w := Warnings(Default(c)); len(w) > 0 {
				t.Errorf("an example should not draw warnings: %q", w)
			}
		})
	}
}
