// Package deploy holds the manifests tinyctl ships inside its binary, so
// that tests and `tinyctl install` apply exactly the files in this folder.
// CRDs has every CustomResourceDefinition under crds/; ScaledObjectCRD is
// the keda.sh/v1alpha1 ScaledObject definition for clusters and tests
// without KEDA.
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
