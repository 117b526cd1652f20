package provision

import "cmp"

// KEDA as `tinyctl install --with-keda` installs it, as release keda in
// namespace keda: by default the chart embedded in tinyctl (deploy/charts/keda:
// KEDA's operator and metrics server at chartKEDA's appVersion, from the
// images KEDA publishes, which the real-node tests build from KEDA's Go
// module); with a repository, chart keda of it at KEDAVersion unless
// another is asked for.
const (
	chartKEDA     = "keda"
	KEDARepo      = "https://kedacore.github.io/charts"
	kedaChart     = "keda"
	KEDAVersion   = "2.21.1"
	kedaRelease   = "keda"
	KEDANamespace = "keda"
)

// KEDAOptions say where KEDA's chart comes from. All zero: the embedded
// chart.
type KEDAOptions struct {
	// Repo and Version select the chart in a chart repository (KEDA's own,
	// or a mirror); a Version alone takes it from KEDARepo, a Repo alone
	// takes KEDAVersion.
	Repo, Version string
	// ChartPath, when set, is a local chart directory or packaged .tgz
	// used instead of the repository (installs with no network); Repo and
	// Version are then ignored.
	ChartPath string
	// Namespace holds the release and KEDA's objects; Helm creates it.
	Namespace string
	// Values are the release's values on top of the chart's defaults.
	Values map[string]any
}

// KEDA returns the release that installs KEDA as opts say. The embedded
// chart goes into Plan.AfterCRDs: its ScaledObject CRD is tinyctl's, which
// its operator needs before it starts. Any other goes into Plan.Extra,
// before tinyctl's CRDs, so that KEDA's chart owns the keda.sh CRDs and
// InstallCRDs leaves them alone.
func KEDA(opts KEDAOptions) Release {
	rel := Release{Name: kedaRelease, Namespace: cmp.Or(opts.Namespace, KEDANamespace), Values: opts.Values}
	switch {
	case opts.ChartPath != "":
		rel.Chart = Chart{Path: opts.ChartPath}
	case opts.Repo == "" && opts.Version == "":
		rel.Chart = Embedded(chartKEDA)
	default:
		rel.Chart = Chart{RepoURL: cmp.Or(opts.Repo, KEDARepo), Name: kedaChart, Version: cmp.Or(opts.Version, KEDAVersion)}
	}
	return rel
}
