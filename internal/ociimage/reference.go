package ociimage

import (
	"fmt"
	"io/fs"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/deploy"
)

// Repository is where released controller images live; the controller
// chart's image.repository defaults to it.
const Repository = "ghcr.io/tinyctl/tinyctl"

// Source is the project's repository, for the image's
// org.opencontainers.image.source label.
const Source = "https://github.com/tinyctl/tinyctl"

// DefaultVersion is the version an image is built as when none is given:
// "v" and the controller chart's appVersion, so that the default image
// reference is the one the chart installs.
func DefaultVersion() (string, error) {
	b, err := fs.ReadFile(deploy.Charts, "charts/tinyctl/Chart.yaml")
	if err != nil {
		return "", err
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &chart); err != nil || chart.AppVersion == "" {
		return "", fmt.Errorf("controller chart: no appVersion (%v)", err)
	}
	return "v" + chart.AppVersion, nil
}

// Tag is the image tag of version: the version without its leading "v"
// (v0.3.0 is tagged 0.3.0), as Helm's appVersion is written.
func Tag(version string) string { return strings.TrimPrefix(version, "v") }

// DefaultReference is Repository tagged with the default version's tag.
func DefaultReference() (string, error) {
	v, err := DefaultVersion()
	if err != nil {
		return "", err
	}
	return Repository + ":" + Tag(v), nil
}
