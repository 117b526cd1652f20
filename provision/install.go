package provision

import (
	"context"
	"fmt"
)

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
	// BrokerAuth is the broker's auth mode; empty keeps the one
	// BrokerValues set (auth.mode), else the chart's default (AuthToken).
	BrokerAuth BrokerAuth
	// BrokerReplicas, when not 0, runs the broker as a JetStream cluster of
	// that many servers (the nats chart's cluster.replicas) and has the
	// controller keep that many copies of its buckets and of component
	// streams (the tinyctl chart's nats.replicas): 1, 3 or 5, over what
	// the values files say. 0 keeps the values files' (default 1).
	BrokerReplicas int
	// BrokerStorage is where the broker keeps its JetStream store; the
	// zero value lets Install decide (ResolveBrokerStorage).
	BrokerStorage BrokerStorage
	// Extra are more releases, usually charts from a repository (KEDA).
	// They are installed right after the namespace, before the CRDs, so a
	// chart that brings its own CRDs owns them and InstallCRDs skips them.
	Extra []Release
	// AfterCRDs are more releases that need tinyctl's CRDs first (the
	// embedded KEDA chart, whose operator watches ScaledObjects).
	AfterCRDs []Release
}

// Install takes the cluster to the runtime plan describes, in order:
// namespace, extra releases, CRDs, releases after the CRDs, broker (its auth Secrets and release),
// collector, controller. Broker values that cannot work (an unknown auth
// mode, a storage the installed broker cannot change to) fail before
// anything is written. Each step's results go to progress as soon as it
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
	var err error
	if plan.BrokerStorage, err = p.ResolveBrokerStorage(ctx, plan.BrokerStorage, plan.BrokerValues); err != nil {
		return nil, err
	}
	steps, err := p.installSteps(plan)
	if err != nil {
		return nil, err
	}
	if err := p.checkManagedNamespaces(ctx, plan.ControllerValues); err != nil {
		return nil, err
	}
	for _, step := range steps {
		if err := done(step(ctx)); err != nil {
			return out, err
		}
	}
	return out, nil
}

type step func(context.Context) ([]Result, error)

func (p *Provisioner) installSteps(plan Plan) ([]step, error) {
	steps := []step{one(p.EnsureNamespace)}
	for _, rel := range plan.Extra {
		steps = append(steps, one(func(ctx context.Context) (Result, error) { return p.InstallRelease(ctx, rel) }))
	}
	if !plan.SkipCRDs {
		steps = append(steps, p.InstallCRDs)
	}
	for _, rel := range plan.AfterCRDs {
		steps = append(steps, one(func(ctx context.Context) (Result, error) { return p.InstallRelease(ctx, rel) }))
	}
	broker := plan.BrokerValues
	if plan.BrokerStorage.Type != "" {
		broker = mergeValues(broker, plan.BrokerStorage.values())
	}
	if plan.BrokerAuth != "" {
		broker = mergeValues(broker, map[string]any{"auth": map[string]any{"mode": string(plan.BrokerAuth)}})
	}
	controller := plan.ControllerValues
	switch plan.BrokerReplicas {
	case 0:
	case 1, 3, 5:
		broker = mergeValues(broker, map[string]any{"cluster": map[string]any{"replicas": plan.BrokerReplicas}})
		controller = mergeValues(controller, map[string]any{"nats": map[string]any{"replicas": plan.BrokerReplicas}})
	default:
		return nil, fmt.Errorf("broker replicas %d: want 1, 3 or 5 (a JetStream cluster needs a majority of an odd number of servers; JetStream keeps at most 5 replicas)", plan.BrokerReplicas)
	}
	auth, err := brokerAuth(broker)
	if err != nil {
		return nil, err
	}
	steps = append(steps, func(ctx context.Context) ([]Result, error) { return p.InstallBroker(ctx, broker) })
	if plan.SkipCollector {
		// No collector: workers get no endpoint and no egress to one.
		controller = mergeValues(controller, map[string]any{"collector": map[string]any{"endpoint": "-"}})
	} else {
		steps = append(steps, one(func(ctx context.Context) (Result, error) { return p.InstallCollector(ctx, plan.CollectorValues) }))
	}
	return append(steps, one(func(ctx context.Context) (Result, error) {
		return p.InstallController(ctx, plan.ControllerImage, auth.mode, controller)
	})), nil
}

// one adapts a single-result step.
func one(f func(context.Context) (Result, error)) step {
	return func(ctx context.Context) ([]Result, error) {
		r, err := f(ctx)
		return []Result{r}, err
	}
}
