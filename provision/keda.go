package provision

import "cmp"

// KEDA's chart as `tinyctl install --with-keda` installs it: chart keda of
// KEDA's chart repository at a pinned version, as release keda in
// namespace keda, so the version only changes with a tinyctl release (or
// KEDAOptions.Version).
const (
	KEDARepo      = "https://kedacore.github.io/charts"
	kedaChart     = "keda"
	KEDAVersion   = "2.21.1"
	kedaRelease   = "keda"
	KEDANamespace = "keda"
)

// KEDAOptions say where KEDA's chart comes from. Zero fields take the
// constants above.
type KEDAOptions struct {
	// Repo and Version select the chart in a chart repository (a mirror,
	// say).
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

// KEDA returns the release that installs KEDA as opts say. Install it
// through Plan.Extra, which runs before tinyctl's CRDs, so KEDA's chart
// owns the keda.sh CRDs and InstallCRDs leaves them alone.
func KEDA(opts KEDAOptions) Release {
	rel := Release{Name: kedaRelease, Namespace: cmp.Or(opts.Namespace, KEDANamespace), Values: opts.Values}
	if opts.ChartPath != "" {
		rel.Chart = Chart{Path: opts.ChartPath}
		return rel
	}
	rel.Chart = Chart{RepoURL: cmp.Or(opts.Repo, KEDARepo), Name: kedaChart, Version: cmp.Or(opts.Version, KEDAVersion)}
	return rel
}
