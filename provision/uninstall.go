package provision

import (
	"context"
	"fmt"
	"slices"

	helmclient "github.com/mittwald/go-helm-client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api/action"
)

// UninstallOptions tune Uninstall.
type UninstallOptions struct {
	// KeepData keeps the broker's JetStream volumes, its auth Secrets
	// (token or keys) and the namespace, so a later Install finds its
	// streams and component specs again, and credentials minted before
	// still work.
	KeepData bool
}

// Uninstall removes what Install created and nothing else: every release
// recorded with LabelRuntime set to the runtime namespace (the controller
// first, the broker last), the broker's auth Secrets and JetStream
// volumes, tinyctl's CRDs when no object of their kinds is left anywhere,
// and the namespace when Install created it and it holds nothing tinyctl
// did not put there; otherwise tinyctl's labels are taken off the
// namespace. KeepData keeps the broker's data, auth Secrets and namespace. Each
// result goes to progress as it happens. Uninstall stops at the first
// failure; running it again finishes the job.
func (p *Provisioner) Uninstall(ctx context.Context, opts UninstallOptions, progress Progress) ([]Result, error) {
	var out []Result
	done := func(rs []Result, err error) error {
		for _, r := range rs {
			if r.Action != "" {
				out = append(out, r)
				progress.report(r)
			}
		}
		return err
	}
	steps := []step{
		p.uninstallReleases,
		func(ctx context.Context) ([]Result, error) { return p.removeSecrets(ctx, opts.KeepData) },
		func(ctx context.Context) ([]Result, error) { return p.removeVolumes(ctx, opts.KeepData) },
		p.removeCRDs,
		func(ctx context.Context) ([]Result, error) { return p.removeNamespace(ctx, opts.KeepData) },
	}
	for _, s := range steps {
		if err := done(s(ctx)); err != nil {
			return out, err
		}
	}
	return out, nil
}

// releaseKey names one release.
type releaseKey struct{ namespace, name string }

// uninstallReleases removes every release of this runtime.
func (p *Provisioner) uninstallReleases(ctx context.Context) ([]Result, error) {
	keys, err := p.runtimeReleases(ctx)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, k := range keys {
		res, err := p.uninstallRelease(k)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// runtimeReleases finds the releases labelled for this runtime in every
// namespace, from the records of Helm's Secrets driver, in removal order:
// controller, collector, others, broker.
func (p *Provisioner) runtimeReleases(ctx context.Context) ([]releaseKey, error) {
	sel := "owner=helm," + LabelRuntime + "=" + p.opts.Namespace
	list, err := p.kube.CoreV1().Secrets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list release records: %w", err)
	}
	var keys []releaseKey
	for _, s := range list.Items {
		k := releaseKey{s.Namespace, s.Labels["name"]}
		if k.name != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b releaseKey) int { return removalRank(a) - removalRank(b) })
	return keys, nil
}

func removalRank(k releaseKey) int {
	switch k.name {
	case ChartController:
		return 0
	case ChartCollector:
		return 1
	case ChartBroker:
		return 3
	}
	return 2
}

// uninstallRelease removes one release, its objects and its history.
func (p *Provisioner) uninstallRelease(k releaseKey) (Result, error) {
	res := Result{Kind: "Release", Namespace: k.namespace, Name: k.name}
	hc, err := p.helm(k.namespace)
	if err != nil {
		return res, err
	}
	last, err := p.lastRelease(k.namespace, k.name)
	if err != nil {
		return res, err
	}
	if last == nil {
		res.Action = action.Absent
		return res, nil
	}
	spec := &helmclient.ChartSpec{ReleaseName: k.name, Namespace: k.namespace, Wait: p.opts.Wait, Timeout: p.opts.Timeout}
	if err := hc.UninstallRelease(spec); err != nil {
		return Result{Kind: res.Kind, Namespace: res.Namespace, Name: res.Name}, fmt.Errorf("%s: uninstall: %w", res.Ref(), err)
	}
	res.Action, res.Chart, res.Revision = action.Deleted, chartRef(last), last.Version
	return res, nil
}
