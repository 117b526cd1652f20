package localnode

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
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

// kedaModule is KEDA's Go module; its operator and metrics server are
// built from it at the embedded keda chart's appVersion.
const kedaModule = "github.com/kedacore/keda/v2"

// KEDAImages are the images the embedded keda chart (`tinyctl install
// --with-keda`) runs, KEDA's operator and external metrics server, built
// from KEDA's Go module at the chart's image tags under the references the
// chart names. They are built in the module's own directory (the go
// command's module cache), with its go.mod and go.sum, as KEDA's release
// builds them.
func KEDAImages(ctx context.Context) ([]Image, error) {
	b, err := fs.ReadFile(deploy.Charts, "charts/keda/values.yaml")
	if err != nil {
		return nil, err
	}
	var v struct {
		Image struct {
			Operator, MetricsServer struct{ Repository, Tag string }
		}
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("chart keda values: %w", err)
	}
	op, ms := v.Image.Operator, v.Image.MetricsServer
	if op.Tag == "" || op.Tag != ms.Tag {
		return nil, fmt.Errorf("chart keda values: the operator's and metrics server's image tags (%q, %q) must name one KEDA release", op.Tag, ms.Tag)
	}
	dir, err := moduleDir(ctx, kedaModule, "v"+op.Tag)
	if err != nil {
		return nil, err
	}
	return []Image{
		{Ref: op.Repository + ":" + op.Tag, Program: ociimage.Program{Dir: dir, Package: "./cmd/operator", Path: "/keda", UID: 65532}},
		{Ref: ms.Repository + ":" + ms.Tag, Program: ociimage.Program{Dir: dir, Package: "./cmd/adapter", Path: "/keda-adapter", UID: 65532}},
	}, nil
}

// moduleDir downloads module path at version into the module cache (if it
// is not there) and returns its directory.
func moduleDir(ctx context.Context, path, version string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", path+"@"+version)
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); jerr != nil || err != nil || mod.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %v %s", path, version, err, mod.Error)
	}
	return mod.Dir, nil
}
