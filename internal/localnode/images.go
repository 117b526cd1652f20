package localnode

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/tinyctl/tinyctl/internal/ociimage"
)

// Image is an image to build for the node from a Go program of this
// module (or of a module it requires), tagged Ref.
type Image struct {
	Ref     string
	Program ociimage.Program
}

// Pause is the sandbox image: this package's pause program, tagged
// PauseImage. moduleDir is the tinyctl module's root.
func Pause(moduleDir string) Image {
	return Image{Ref: PauseImage, Program: ociimage.Program{
		Dir: moduleDir, Package: "./internal/localnode/pause", Path: "/pause", UID: 65535,
	}}
}

// BuildImages compiles each image's program for this machine's
// architecture and writes it as a tarball into dir, returning the
// tarballs' paths for Options.Images. The go command's build cache makes a
// rebuild of an unchanged program cost only its link.
func BuildImages(ctx context.Context, dir string, images []Image, log io.Writer) ([]string, error) {
	p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	work, err := os.MkdirTemp(dir, "work-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	var paths []string
	for _, im := range images {
		start := time.Now()
		img, err := im.Program.Image(ctx, work, p, time.Unix(0, 0))
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(im.Ref)+".tar")
		if err := ociimage.WriteTarball(path, img, im.Ref); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "localnode: built image %s in %s\n", im.Ref, time.Since(start).Round(100*time.Millisecond))
		paths = append(paths, path)
	}
	return paths, nil
}
