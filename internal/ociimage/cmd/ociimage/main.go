// Command ociimage builds the controller image (`go tool task image`): it
// writes an OCI image layout, and optionally docker-loadable tarballs, and
// pushes the image when asked. Run it from the module's root.
//
//	go run ./internal/ociimage/cmd/ociimage [-version v0.1.0] [-platforms linux/amd64,linux/arm64]
//	    [-out dist/image] [-tarballs dist] [-push registry.example.com/tinyctl:0.1.0]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/tinyctl/tinyctl/internal/ociimage"
)

type flags struct {
	version, platforms, tags string
	out, tarballs, ref, push string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var f flags
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	fs.StringVar(&f.version, "version", "", `version to build, such as v0.3.0 (default: "v" + the controller chart's appVersion)`)
	fs.StringVar(&f.platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	fs.StringVar(&f.tags, "tags", ociimage.DefaultTags, "go build tags of the controller binary")
	fs.StringVar(&f.out, "out", "dist/image", "OCI image layout directory to write")
	fs.StringVar(&f.tarballs, "tarballs", "", "also write one docker-loadable tarball per platform into this directory")
	fs.StringVar(&f.ref, "ref", "", "image reference to name the image (default: "+ociimage.Repository+":<version without v>)")
	fs.StringVar(&f.push, "push", "", "push the image to this reference (repository:tag) too")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return f.build(ctx)
}

func (f flags) build(ctx context.Context) error {
	if f.version == "" {
		v, err := ociimage.DefaultVersion()
		if err != nil {
			return err
		}
		f.version = v
	}
	if f.ref == "" {
		f.ref = ociimage.Repository + ":" + ociimage.Tag(f.version)
	}
	platforms, err := parsePlatforms(f.platforms)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	start := time.Now()
	img, err := ociimage.Build(ctx, ociimage.Options{Dir: ".", Work: work, Version: f.version, Platforms: platforms, Tags: f.tags})
	if err != nil {
		return err
	}
	if err := ociimage.WriteLayout(f.out, img.Index, f.ref); err != nil {
		return err
	}
	fmt.Printf("%s (%s, revision %s) for %s: OCI layout %s, %s\n", f.ref, f.version, orNone(img.Revision), f.platforms, f.out, time.Since(start).Round(100*time.Millisecond))
	return f.publish(ctx, img.Index)
}

// publish writes the tarballs and pushes, as the flags ask.
func (f flags) publish(ctx context.Context, idx v1.ImageIndex) error {
	if f.tarballs != "" {
		paths, err := ociimage.WriteTarballs(f.tarballs, idx, f.ref)
		if err != nil {
			return err
		}
		fmt.Printf("docker load -i %s\n", strings.Join(paths, ", or "))
	}
	if f.push == "" {
		return nil
	}
	pushed, err := ociimage.Push(ctx, idx, f.push)
	if err != nil {
		return err
	}
	fmt.Println("pushed", pushed)
	return nil
}

func parsePlatforms(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, p := range strings.Split(s, ",") {
		pl, err := ociimage.ParsePlatform(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		out = append(out, pl)
	}
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "none recorded"
	}
	return s
}
