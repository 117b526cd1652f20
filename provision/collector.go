package provision

import "context"

// InstallCollector installs or upgrades the trace collector (release
// "collector" of the embedded collector chart) with values on top of the
// chart's defaults. It fails as InstallRelease does.
func (p *Provisioner) InstallCollector(ctx context.Context, values map[string]any) (Result, error) {
	return p.InstallRelease(ctx, Release{Name: ChartCollector, Chart: Embedded(ChartCollector), Values: values})
}
