package ociimage

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// OCI annotation and label keys the image carries.
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
)

// DefaultTags are the build tags of the controller binary: no install or
// uninstall command, so no Helm SDK (about 11 MB less; docs/install.md has the figures).
const DefaultTags = "noinstall"

// Options configure Build.
type Options struct {
	// Dir is the module's root directory, where ./cmd/tinyctl is.
	Dir string
	// Work receives the compiled binaries.
	Work string
	// Version is set as main.version, such as v0.1.0.
	Version string
	// Platforms to build, each linux/<arch>.
	Platforms []v1.Platform
	// Tags are the go build tags (DefaultTags when empty).
	Tags string
}

// Image is what Build made: the index of one image per platform, and the
// values its labels carry.
type Image struct {
	Index    v1.ImageIndex
	Version  string
	Revision string
}

// Build compiles tinyctl for each of o.Platforms and returns the index of
// their images, dated by the commit's time so that a rebuild of the same
// commit gives the same digests. It fails on a compile error (with the
// compiler's output).
func Build(ctx context.Context, o Options) (Image, error) {
	if len(o.Platforms) == 0 {
		return Image{}, fmt.Errorf("build image: no platforms")
	}
	if o.Tags == "" {
		o.Tags = DefaultTags
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	out := Image{Version: o.Version}
	var at time.Time
	out.Revision, at = source(ctx, o.Dir)
	if at.IsZero() {
		at = time.Unix(0, 0)
	}
	prog := Program{Dir: o.Dir, Package: "./cmd/tinyctl", Path: Entrypoint, Cmd: []string{"serve"}, UID: UID,
		Tags: o.Tags, LDFlags: "-X main.version=" + o.Version, Labels: out.labels()}
	for _, p := range o.Platforms {
		img, err := prog.Image(ctx, o.Work, p, at)
		if err != nil {
			return Image{}, err
		}
		pp := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &pp}})
	}
	out.Index = mutate.Annotations(idx, out.labels()).(v1.ImageIndex)
	return out, nil
}

// labels are the OCI labels of the image (revision left out when the
// build recorded none).
func (i Image) labels() map[string]string {
	l := map[string]string{LabelVersion: Tag(i.Version), LabelSource: Source}
	if i.Revision != "" {
		l[LabelRevision] = i.Revision
	}
	return l
}

// Program is a Go main package built into a single-layer image of its
// own: the base files (passwd, group, root certificates) and the static
// binary, run as UID. The controller image is one; the real-node tests
// build the NATS broker, the example worker and the pod sandbox's pause
// program the same way.
type Program struct {
	// Dir is the directory of the module the go command builds in.
	Dir string
	// Package is the main package, as the go command takes it.
	Package string
	// Path is where the binary lives in the image; it is the entrypoint.
	Path string
	// Cmd is the image's command: the entrypoint's default arguments.
	Cmd []string
	// UID is the user (and group) the image runs as; 0 is root.
	UID int
	// Tags and LDFlags are passed to go build, after -s -w.
	Tags, LDFlags string
	// Labels are the image's OCI labels.
	Labels map[string]string
}

// Image compiles the program for platform p in work and returns its image,
// every time in it at. It fails on a compile error, with the compiler's
// output.
func (prog Program) Image(ctx context.Context, work string, p v1.Platform, at time.Time) (v1.Image, error) {
	out := filepath.Join(work, path.Base(prog.Path)+"-"+p.OS+"-"+p.Architecture+p.Variant)
	bin, err := compile(ctx, prog.Dir, prog.Package, out, p, prog.Tags, prog.LDFlags)
	if err != nil {
		return nil, err
	}
	img, err := prog.assemble(p, bin, at)
	if err != nil {
		return nil, fmt.Errorf("image of %s for %s: %w", prog.Package, p, err)
	}
	return img, nil
}

// assemble is the image of the binary at bin for p: the base layer and
// the binary, run as prog.UID with the binary as entrypoint.
func (prog Program) assemble(p v1.Platform, bin string, at time.Time) (v1.Image, error) {
	exe, err := binaryFile(bin, prog.Path)
	if err != nil {
		return nil, err
	}
	base, err := layer(at, baseFiles()...)
	if err != nil {
		return nil, err
	}
	app, err := layer(at, exe)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	user := strconv.Itoa(prog.UID) + ":" + strconv.Itoa(prog.UID)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		OS: p.OS, Architecture: p.Architecture, Variant: p.Variant, Created: v1.Time{Time: at},
		Config: v1.Config{User: user, Entrypoint: []string{prog.Path}, Cmd: prog.Cmd, WorkingDir: "/", Labels: prog.Labels},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: v1.Time{Time: at}, CreatedBy: "ociimage: /etc/passwd, /etc/group, " + certsFile}},
		mutate.Addendum{Layer: app, History: v1.History{Created: v1.Time{Time: at}, CreatedBy: "ociimage: go build " + prog.Package}})
}

// ParsePlatform parses "linux/amd64" or "linux/arm/v7". Only linux is
// accepted: the image is for Kubernetes nodes.
func ParsePlatform(s string) (v1.Platform, error) {
	p, err := v1.ParsePlatform(s)
	if err != nil {
		return v1.Platform{}, err
	}
	if p.OS != "linux" || p.Architecture == "" {
		return v1.Platform{}, fmt.Errorf("platform %q: want linux/<arch>", s)
	}
	return *p, nil
}
