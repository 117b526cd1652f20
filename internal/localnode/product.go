package localnode

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/deploy"
	"github.com/tinyctl/tinyctl/internal/ociimage"
)

// ExampleWorkerImage is the reference of examples/worker's image.
const ExampleWorkerImage = "tinyctl.local/example-worker:dev"

// ProductImages are the images a default `tinyctl install` runs, built
// from this module under the references its charts name, so an install
// with no image flags finds them on the node: the controller (the
// controller image as `go tool task image` builds it), the NATS broker
// (nats-server at the version go.mod requires), the trace collector
// (tools/collector) — plus the example worker and the pause image.
// moduleDir is the tinyctl module's root.
func ProductImages(moduleDir string) ([]Image, error) {
	ctrl, err := ociimage.DefaultReference()
	if err != nil {
		return nil, err
	}
	version, err := ociimage.DefaultVersion()
	if err != nil {
		return nil, err
	}
	nats, err := chartImage("nats")
	if err != nil {
		return nil, err
	}
	collector, err := chartImage("collector")
	if err != nil {
		return nil, err
	}
	return []Image{
		Pause(moduleDir),
		{Ref: ctrl, Program: ociimage.Program{Dir: moduleDir, Package: "./cmd/tinyctl", Path: ociimage.Entrypoint,
			Cmd: []string{"serve"}, UID: ociimage.UID, Tags: ociimage.DefaultTags, LDFlags: "-X main.version=" + version}},
		{Ref: nats, Program: ociimage.Program{Dir: moduleDir, Package: "github.com/nats-io/nats-server/v2", Path: "/nats-server",
			Cmd: []string{"--config", "/etc/nats/nats.conf"}, UID: 1000}},
		{Ref: collector, Program: ociimage.Program{Dir: filepath.Join(moduleDir, "tools", "collector"), Package: ".", Path: "/otelcol",
			Cmd: []string{"--config", "/etc/otelcol/config.yaml"}, UID: 10001}},
		{Ref: ExampleWorkerImage, Program: ociimage.Program{Dir: moduleDir, Package: "./examples/worker", Path: "/worker", UID: 65532}},
	}, nil
}

// chartImage is the image.repository:image.tag of an embedded chart's
// default values.
func chartImage(chart string) (string, error) {
	b, err := fs.ReadFile(deploy.Charts, "charts/"+chart+"/values.yaml")
	if err != nil {
		return "", err
	}
	var v struct {
		Image struct{ Repository, Tag string }
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("chart %s values: %w", chart, err)
	}
	if v.Image.Repository == "" || v.Image.Tag == "" {
		return "", fmt.Errorf("chart %s values: no image.repository and image.tag", chart)
	}
	return v.Image.Repository + ":" + v.Image.Tag, nil
}
