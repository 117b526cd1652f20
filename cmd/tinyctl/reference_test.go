package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra/doc"
)

var updateReference = flag.Bool("update-reference", false, "write docs/reference/ from the command tree (go tool task docs-cli)")

// referenceDir holds the command reference, one page per command.
const referenceDir = "../../docs/reference"

// TestTheCommandReferenceIsTheCommands generates the reference of every
// command and flag with cobra's generator and fails while docs/reference
// says anything else: the reference cannot drift from the binary.
func TestTheCommandReferenceIsTheCommands(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	root.DisableAutoGenTag = true
	dir := t.TempDir()
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
	want := pages(t, dir)
	if len(want) < 20 {
		t.Fatalf("the generator wrote %d pages, want one per command", len(want))
	}
	if *updateReference {
		if err := os.RemoveAll(referenceDir); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(referenceDir, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		return
	}
	have := pages(t, referenceDir)
	names := keys(want, have)
	slices.Sort(names)
	for _, name := range names {
		if want[name] != have[name] {
			t.Errorf("docs/reference/%s is not what the commands say: run go tool task docs-cli and commit the result", name)
		}
	}
}

// pages reads the markdown files of dir by name.
func pages(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = string(b)
	}
	return out
}

func keys(ms ...map[string]string) []string {
	var out []string
	for _, m := range ms {
		for k := range m {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}
