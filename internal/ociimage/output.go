package ociimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// refNameAnnotation names an index in an OCI layout's index.json.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout writes the index into a new OCI image layout at dir
// (replacing whatever was there), its entry annotated with ref, for
// `skopeo copy oci:DIR`, `crane push DIR` or a registry mirror.
func WriteLayout(dir string, idx v1.ImageIndex, ref string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("oci layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refNameAnnotation: ref})); err != nil {
		return fmt.Errorf("oci layout %s: %w", dir, err)
	}
	return nil
}

// WriteTarballs writes each platform's image as a `docker load`-able
// tarball tagged ref, named tinyctl-<os>-<arch>.tar in dir, and returns
// their paths.
func WriteTarballs(dir string, idx v1.ImageIndex, ref string) ([]string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, "tinyctl-"+d.Platform.OS+"-"+d.Platform.Architecture+d.Platform.Variant+".tar")
		if err := tarball.WriteToFile(p, tag, img); err != nil {
			return nil, fmt.Errorf("tarball %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// WriteTarball writes img as a `docker load`-able tarball (which `ctr
// images import` reads too) at path, tagged ref.
func WriteTarball(path string, img v1.Image, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("tarball %s: %w", path, err)
	}
	return nil
}

// Push uploads the index to the registry of ref (a tag), with the
// credentials of ~/.docker/config.json and its helpers (`docker login`),
// over plain HTTP for localhost registries. It returns the pushed
// reference with its digest.
func Push(ctx context.Context, idx v1.ImageIndex, ref string) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return tag.Context().Digest(d.String()).String(), nil
}
