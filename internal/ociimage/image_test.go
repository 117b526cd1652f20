package ociimage_test

import (
	"archive/tar"
	"context"
	"debug/elf"
	"encoding/pem"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/tinyctl/tinyctl/internal/ociimage"
)

// testVersion is what the test builds as; the binary must report it.
const testVersion = "v0.0.0-test"

// build builds the image for this machine's architecture (the go command's
// build cache makes a second build cheap) and writes it as an OCI layout
// in a temporary directory, which it reads back.
func build(t *testing.T) (ociimage.Image, v1.ImageIndex) {
	t.Helper()
	p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	img, err := ociimage.Build(context.Background(), ociimage.Options{
		Dir: "../..", Work: t.TempDir(), Version: testVersion, Platforms: []v1.Platform{p}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	if err := ociimage.WriteLayout(dir, img.Index, "example.com/tinyctl:test"); err != nil {
		t.Fatal(err)
	}
	lp, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := lp.IndexManifest()
	if err != nil || len(m.Manifests) != 1 || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "example.com/tinyctl:test" {
		t.Fatalf("layout index.json = %+v, %v; want one index named example.com/tinyctl:test", m, err)
	}
	idx, err := lp.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img, idx
}

// TestImageRunsTheStaticControllerAsNonroot builds the image and reads it
// as a container runtime would: its config, its layers, and the binary.
func TestImageRunsTheStaticControllerAsNonroot(t *testing.T) {
	img, idx := build(t)
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Platform == nil || m.Manifests[0].Platform.String() != "linux/"+runtime.GOARCH {
		t.Fatalf("index manifests = %+v, want one for linux/%s", m.Manifests, runtime.GOARCH)
	}
	image, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/tinyctl"}) || !slices.Equal(c.Cmd, []string{"serve"}) ||
		cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("config: user %q entrypoint %q cmd %q platform %s/%s; want 65532:65532, [/tinyctl], [serve], linux/%s",
			c.User, c.Entrypoint, c.Cmd, cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	if c.Labels[ociimage.LabelVersion] != "0.0.0-test" || c.Labels[ociimage.LabelSource] != "https://github.com/tinyctl/tinyctl" ||
		!regexp.MustCompile(`^[0-9a-f]{40}(-dirty)?$`).MatchString(c.Labels[ociimage.LabelRevision]) ||
		c.Labels[ociimage.LabelRevision] != img.Revision {
		t.Errorf("labels = %v, want version 0.0.0-test, the source and the commit %s", c.Labels, img.Revision)
	}

	files := layerFiles(t, image)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		if strings.HasPrefix(n, "bin/") || strings.HasPrefix(n, "usr/") || strings.HasSuffix(n, "/sh") {
			t.Errorf("the image holds %s; it should have no shell or tools", n)
		}
	}
	want := []string{"etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt", "home/", "home/nonroot/", "tinyctl"}
	if !slices.Equal(names, want) {
		t.Errorf("image files = %v, want %v", names, want)
	}
	if !strings.Contains(string(files["etc/passwd"]), "\nnonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd lacks the nonroot user:\n%s", files["etc/passwd"])
	}
	if n := countCerts(files["etc/ssl/certs/ca-certificates.crt"]); n < 100 {
		t.Errorf("ca-certificates.crt holds %d certificates, want the ~150 of the NSS store", n)
	}
	checkStatic(t, files["tinyctl"])
}

// layerFiles reads every layer of image, later layers winning, and returns
// each entry's content by name.
func layerFiles(t *testing.T, image v1.Image) map[string][]byte {
	t.Helper()
	layers, err := image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
		rc.Close()
	}
	return files
}

func countCerts(data []byte) int {
	n := 0
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		n++
	}
	return n
}

// checkStatic wants bin to be a Linux executable for this architecture
// with no program interpreter and no shared libraries, and runs it: it
// reports the version it was built as and has no install command (the
// noinstall build tag).
func checkStatic(t *testing.T, bin []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tinyctl")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("/tinyctl is not an ELF file: %v", err)
	}
	defer f.Close()
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]
	if f.Type != elf.ET_EXEC || f.OSABI != elf.ELFOSABI_NONE || (machine != 0 && f.Machine != machine) {
		t.Errorf("/tinyctl: type %s, ABI %s, machine %s; want a linux executable for %s", f.Type, f.OSABI, f.Machine, runtime.GOARCH)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/tinyctl has a program interpreter: it is dynamically linked")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("/tinyctl needs shared libraries %v (%v)", libs, err)
	}
	if f.Section(".symtab") != nil || f.Section(".debug_info") != nil {
		t.Error("/tinyctl carries a symbol table or DWARF: it is not stripped")
	}
	if runtime.GOOS != "linux" {
		return
	}
	out, err := exec.Command(path, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "tinyctl "+testVersion+" (") {
		t.Errorf("/tinyctl version: %v\n%s\nwant tinyctl %s", err, out, testVersion)
	}
	if out, _ := exec.Command(path, "install").CombinedOutput(); !strings.Contains(string(out), `unknown command "install"`) {
		t.Errorf("/tinyctl install:\n%s\nwant no install command in the controller image", out)
	}
}
