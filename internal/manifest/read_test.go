package manifest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tinyctl/tinyctl/internal/manifest"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(srcs []manifest.Source) []string {
	var out []string
	for _, s := range srcs {
		out = append(out, s.Name)
	}
	return out
}

func TestReadFilesDirectoriesAndStdin(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yaml", "a.yml", "c.json", "notes.txt", "sub/d.yaml"} {
		write(t, filepath.Join(dir, f), "x")
	}
	j := func(f string) string { return filepath.Join(dir, f) }
	tests := []struct {
		name      string
		paths     []string
		recursive bool
		want      []string
	}{
		{"a directory gives its component files in name order", []string{dir}, false, []string{j("a.yml"), j("b.yaml"), j("c.json")}},
		{"-R descends into subdirectories", []string{dir}, true, []string{j("a.yml"), j("b.yaml"), j("c.json"), j("sub/d.yaml")}},
		{"a file is read whatever its name", []string{j("notes.txt")}, false, []string{j("notes.txt")}},
		{"- is standard input", []string{"-", j("b.yaml")}, false, []string{manifest.StdinName, j("b.yaml")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs, err := manifest.Read(tt.paths, tt.recursive, strings.NewReader("stdin"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, names(srcs)); diff != "" {
				t.Errorf("sources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadMissingPathFails(t *testing.T) {
	_, err := manifest.Read([]string{filepath.Join(t.TempDir(), "nope.yaml")}, false, nil)
	if err == nil || !strings.Contains(err.Error(), "nope.yaml: no such file or directory") {
		t.Errorf("err = %v, want it to name the missing file", err)
	}
}
