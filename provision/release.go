package provision

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	helmclient "github.com/mittwald/go-helm-client"
	"helm.sh/helm/v3/pkg/release"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/api/action"
)

// Release is one Helm release to install or upgrade.
type Release struct {
	// Name is the release name: an RFC 1123 label of at most 53
	// characters (see SanitizeResourceName).
	Name string
	// Namespace holds the release and its objects (default: the runtime
	// namespace). Helm creates it when it is missing.
	Namespace string
	// Chart says where the chart comes from.
	Chart Chart
	// Values are the release's values, complete: a value not given here
	// takes the chart's default, even if an earlier install set it.
	Values map[string]any
}

// InstallRelease makes release rel match its chart and values: it installs
// a new release, upgrades an existing one in place when the chart, the
// values or the rendered manifest differ from the deployed revision, and
// writes nothing (no revision) when they do not. A release left pending by
// an interrupted operation is recovered first. Upgrades are never forced.
// It fails with ErrChartUnavailable when the chart cannot be fetched, with
// ErrReleaseBusy when another operation is in progress, and with Helm's
// error when rendering or applying fails.
func (p *Provisioner) InstallRelease(ctx context.Context, rel Release) (Result, error) {
	if rel.Namespace == "" {
		rel.Namespace = p.opts.Namespace
	}
	res := Result{Kind: "Release", Namespace: rel.Namespace, Name: rel.Name}
	if SanitizeResourceName(rel.Name) != rel.Name {
		return res, fmt.Errorf("%s: invalid release name %q: want an RFC 1123 label of at most %d characters", res.Ref(), rel.Name, MaxReleaseName)
	}
	hc, err := p.helm(rel.Namespace)
	if err != nil {
		return res, err
	}
	where, cleanup, err := p.locate(hc, rel.Chart)
	if err != nil {
		return res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	defer cleanup()
	out, err := p.installOrUpgrade(ctx, hc, rel, where)
	if err != nil {
		if why := p.waitProblems(ctx, rel); why != "" {
			return res, fmt.Errorf("%s: %w\n%s", res.Ref(), err, why)
		}
		return res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	out.Kind, out.Namespace, out.Name = res.Kind, res.Namespace, res.Name
	return out, nil
}

// waitProblems explains a failed wait: why the release's pods are not
// ready ("" without Options.Wait, or when nothing can be found).
func (p *Provisioner) waitProblems(ctx context.Context, rel Release) string {
	if !p.opts.Wait {
		return ""
	}
	return p.whyNotReady(ctx, rel.Namespace, rel.Name)
}

func (p *Provisioner) installOrUpgrade(ctx context.Context, hc *helmclient.HelmClient, rel Release, where string) (Result, error) {
	last, err := p.lastRelease(rel.Namespace, rel.Name)
	if err != nil {
		return Result{}, err
	}
	detail, err := p.recoverPending(hc, last)
	if err != nil {
		return Result{}, err
	}
	spec, err := p.chartSpec(rel, where)
	if err != nil {
		return Result{}, err
	}
	if last == nil || last.Info.Status == release.StatusUninstalled {
		spec.Replace = last != nil
		spec.CreateNamespace = rel.Namespace != p.opts.Namespace
		got, err := hc.InstallChart(ctx, spec, nil)
		return releaseResult(action.Created, got, detail), err
	}
	dry := *spec
	dry.DryRun = true
	planned, err := hc.UpgradeChart(ctx, &dry, nil)
	if err != nil {
		return Result{}, fmt.Errorf("plan upgrade: %w", err)
	}
	if last.Info.Status == release.StatusDeployed && sameRelease(last, planned) {
		return releaseResult(action.Unchanged, last, detail), nil
	}
	got, err := hc.UpgradeChart(ctx, spec, nil)
	return releaseResult(action.Upgraded, got, detail), err
}

// chartSpec is the go-helm-client spec of rel, whose chart is at where.
func (p *Provisioner) chartSpec(rel Release, where string) (*helmclient.ChartSpec, error) {
	vals := rel.Values
	if vals == nil {
		vals = map[string]any{}
	}
	b, err := yaml.Marshal(vals)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	return &helmclient.ChartSpec{
		ReleaseName: rel.Name,
		ChartName:   where,
		Namespace:   rel.Namespace,
		ValuesYaml:  string(b),
		// The values given are the whole desired state: never reuse
		// the previous revision's.
		ResetValues: true,
		Wait:        p.opts.Wait,
		Timeout:     p.opts.Timeout,
		MaxHistory:  DefaultMaxHistory,
		Labels:      map[string]string{LabelRuntime: p.opts.Namespace},
	}, nil
}

// sameRelease reports whether an upgrade to planned would change nothing
// of deployed: same chart, values, labels and rendered manifest.
func sameRelease(deployed, planned *release.Release) bool {
	if planned == nil || chartRef(deployed) != chartRef(planned) || deployed.Manifest != planned.Manifest {
		return false
	}
	if !maps.Equal(deployed.Labels, planned.Labels) {
		return false
	}
	if len(deployed.Config) == 0 && len(planned.Config) == 0 {
		return true // stored records drop empty values: nil and {} agree
	}
	a, errA := json.Marshal(deployed.Config)
	b, errB := json.Marshal(planned.Config)
	return errA == nil && errB == nil && string(a) == string(b)
}

func releaseResult(act action.Action, rel *release.Release, detail string) Result {
	r := Result{Action: act, Detail: detail}
	if rel != nil {
		r.Chart, r.Revision = chartRef(rel), rel.Version
	}
	return r
}
