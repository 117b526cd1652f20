package ociimage_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/tinyctl/tinyctl/internal/ociimage"
)

// TestImageIsReproducibleLoadableAndPushable builds the image twice (same
// digest: every time in it is the commit's), loads its tarball as `docker
// load` would, and pushes it to a registry on this machine.
func TestImageIsReproducibleLoadableAndPushable(t *testing.T) {
	img, idx := build(t)
	_, again := build(t)
	d1, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if d2, err := again.Digest(); err != nil || d1 != d2 {
		t.Errorf("two builds of one commit: digests %s and %s (%v)", d1, d2, err)
	}

	paths, err := ociimage.WriteTarballs(t.TempDir(), img.Index, "example.com/tinyctl:test")
	if err != nil || len(paths) != 1 {
		t.Fatalf("tarballs %v: %v", paths, err)
	}
	tag, _ := name.NewTag("example.com/tinyctl:test")
	loaded, err := tarball.ImageFromPath(paths[0], &tag)
	if err != nil {
		t.Fatalf("load %s: %v", paths[0], err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	built, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := configDigest(t, loaded), configDigest(t, built); a != b {
		t.Errorf("the tarball's image has config %s, the index's %s", a, b)
	}

	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	ref := strings.TrimPrefix(reg.URL, "http://") + "/tinyctl:0.0.0-test"
	pushed, err := ociimage.Push(context.Background(), img.Index, ref)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(ref, ":0.0.0-test") + "@" + d1.String(); pushed != want {
		t.Errorf("Push returned %s, want %s", pushed, want)
	}
	r, _ := name.ParseReference(ref)
	got, err := remote.Index(r)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	if d, _ := got.Digest(); d != d1 {
		t.Errorf("the registry serves %s as %s, want %s", ref, d, d1)
	}
}

func configDigest(t *testing.T, img v1.Image) string {
	t.Helper()
	h, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}
