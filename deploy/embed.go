// Package deploy holds the manifests tinyctl ships inside its binary, so
// that tests and `tinyctl install` apply exactly the files in this folder.
// CRDs has every CustomResourceDefinition under crds/; ScaledObjectCRD is
// the keda.sh/v1alpha1 ScaledObject definition for clusters and tests
// without KEDA. Charts has the Helm charts of the runtime (controller,
// NATS broker, trace collector) that `tinyctl install` installs with no
// network access.
package deploy

import "embed"

// CRDs is the crds/ folder: one CustomResourceDefinition per YAML file,
// named <plural>.<group>.yaml.
//
//go:embed crds/*.yaml
var CRDs embed.FS

// ScaledObjectCRD is crds/scaledobjects.keda.sh.yaml, a structural schema of
// KEDA's documented ScaledObject fields.
//
//go:embed crds/scaledobjects.keda.sh.yaml
var ScaledObjectCRD []byte

// Charts is the charts/ folder: one Helm chart per directory, named for the
// chart (charts/tinyctl, charts/nats, charts/collector), with its
// templates (including _helpers.tpl) and values.
//
//go:embed all:charts
var Charts embed.FS
