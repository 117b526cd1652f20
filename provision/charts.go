package provision

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	helmclient "github.com/mittwald/go-helm-client"
	"helm.sh/helm/v3/pkg/action"

	"github.com/tinyctl/tinyctl/deploy"
)

// Names of the embedded charts (directories under deploy/charts) and of
// the releases Install makes from them.
const (
	ChartController = "tinyctl"
	ChartBroker     = "nats"
	ChartCollector  = "collector"
)

// Chart says where a chart comes from: one embedded in the binary
// (Embedded names a directory of deploy/charts), a local chart directory
// or packaged .tgz (Path), or a chart repository, as `helm install --repo
// RepoURL Name --version Version` would fetch it (an empty Version means
// the newest).
type Chart struct {
	Embedded string
	Path     string
	RepoURL  string
	Name     string
	Version  string
}

// Embedded returns the embedded chart called name.
func Embedded(name string) Chart { return Chart{Embedded: name} }

// String renders "embedded chart nats", "chart at PATH" or "chart keda
// 2.17.0 from URL".
func (c Chart) String() string {
	switch {
	case c.Embedded != "":
		return "embedded chart " + c.Embedded
	case c.Path != "":
		return "chart at " + c.Path
	}
	v := c.Version
	if v == "" {
		v = "(newest)"
	}
	return fmt.Sprintf("chart %s %s from %s", c.Name, v, c.RepoURL)
}

// locate returns a directory or archive holding the chart and a function
// that removes it when it is temporary. A repository chart is downloaded
// into the cache; a local one is used where it is. Errors wrap
// ErrChartUnavailable.
func (p *Provisioner) locate(hc *helmclient.HelmClient, c Chart) (string, func(), error) {
	switch {
	case c.Embedded != "":
		return extractEmbedded(c.Embedded)
	case c.Path != "":
		if _, err := os.Stat(c.Path); err != nil {
			return "", nil, fmt.Errorf("%s: %w: %w", c, ErrChartUnavailable, err)
		}
		return c.Path, func() {}, nil
	}
	if c.RepoURL == "" || c.Name == "" {
		return "", nil, fmt.Errorf("%s: %w: need an embedded name, or a repository URL and a chart name", c, ErrChartUnavailable)
	}
	_, where, err := hc.GetChart(c.Name, &action.ChartPathOptions{RepoURL: c.RepoURL, Version: c.Version})
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w: %w", c, ErrChartUnavailable, err)
	}
	return where, func() {}, nil
}

// extractEmbedded copies deploy/charts/<name> into a new temporary
// directory, which Helm's loader and linter read.
func extractEmbedded(name string) (string, func(), error) {
	sub, err := fs.Sub(deploy.Charts, path.Join("charts", name))
	if err == nil {
		_, err = fs.Stat(sub, "Chart.yaml")
	}
	if err != nil {
		return "", nil, fmt.Errorf("embedded chart %s: %w: %w", name, ErrChartUnavailable, err)
	}
	dir, err := os.MkdirTemp("", "tinyctl-chart-")
	if err != nil {
		return "", nil, fmt.Errorf("embedded chart %s: %w", name, err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	dst := filepath.Join(dir, name)
	if err := os.CopyFS(dst, sub); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("embedded chart %s: extract: %w", name, err)
	}
	return dst, cleanup, nil
}
