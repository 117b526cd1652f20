package provision

import "context"

// Plan is what one Install sets up. Its zero value installs the whole
// runtime with the charts' defaults.
type Plan struct {
	// SkipCRDs leaves CustomResourceDefinitions alone.
	SkipCRDs bool
	// SkipCollector does not install the trace collector.
	SkipCollector bool
	// BrokerValues, CollectorValues and ControllerValues are each
	// release's values on top of its chart's defaults.
	BrokerValues, CollectorValues, ControllerValues map[string]any
	// ControllerImage is the controller image (repository:tag); empty
	// keeps the chart's default.
	ControllerImage string
	// Extra are more releases, usually charts from a repository (KEDA).
	// They are installed right after the namespace, before the CRDs, so a
	// chart that brings its own CRDs owns them and InstallCRDs skips them.
	Extra []Release
}

// Install takes the cluster to the runtime plan describes, in order:
// namespace, extra releases, CRDs, broker (token Secret and release),
// collector, controller. Each step's results go to progress as soon as it
// finishes. Install stops at the first failing step and returns the
// results so far with its error. Running it again with the same plan
// writes nothing.
func (p *Provisioner) Install(ctx context.Context, plan Plan, progress Progress) ([]Result, error) {
	var out []Result
	done := func(rs []Result, err error) error {
		for _, r := range rs {
			if r.Action != "" { // a failed object has no action
				out = append(out, r)
				progress.report(r)
			}
		}
		return err
	}
	for _, step := range p.installSteps(plan) {
		if err := done(step(ctx)); err != nil {
			return out, err
		}
	}
	return out, nil
}

type step func(context.Context) ([]Result, error)

func (p *Provisioner) installSteps(plan Plan) []step {
	steps := []step{one(p.EnsureNamespace)}
	for _, rel := range plan.Extra {
		steps = append(steps, one(func(ctx context.Context) (Result, error) { return p.InstallRelease(ctx, rel) }))
	}
	if !plan.SkipCRDs {
		steps = append(steps, p.InstallCRDs)
	}
	steps = append(steps, func(ctx context.Context) ([]Result, error) { return p.InstallBroker(ctx, plan.BrokerValues) })
	if !plan.SkipCollector {
		steps = append(steps, one(func(ctx context.Context) (Result, error) { return p.InstallCollector(ctx, plan.CollectorValues) }))
	}
	return append(steps, one(func(ctx context.Context) (Result, error) {
		return p.InstallController(ctx, plan.ControllerImage, plan.ControllerValues)
	}))
}

// one adapts a single-result step.
func one(f func(context.Context) (Result, error)) step {
	return func(ctx context.Context) ([]Result, error) {
		r, err := f(ctx)
		return []Result{r}, err
	}
}
