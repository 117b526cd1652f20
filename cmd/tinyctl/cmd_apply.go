package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/client/progress"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/manifest"
	"github.com/tinyctl/tinyctl/internal/preview"
)

// Values of --dry-run.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
)

type applyOptions struct {
	files      fileFlags
	dryRun     string
	ifRevision uint64
	kube       cli.KubeFlags
	cluster    clusterFlag
	wait       bool
	timeout    time.Duration
}

func newApplyCmd(o *options) *cobra.Command {
	a := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR|-",
		Short: "Validate components and publish them to the spec bucket",
		Long: `Apply reads every component document of the files, directories (*.yaml, *.yml,
*.json) and standard input given with -f, validates all of them, and publishes
each one to the spec bucket, printing whether it was created, configured or
unchanged. If any document anywhere is invalid, every problem is printed and
nothing is published.

--wait then waits until every live cluster the placement of each component
selects reports it Ready at the revision published: its children applied and
its pods running it (or scaled to zero). It exits 0 when they all do, and 1
with what each cluster reports otherwise: at --timeout, or at once when a
cluster reports what waiting cannot change (Stalled, ProgressDeadlineExceeded).`,
		Example: `  tinyctl apply -f examples/
  tinyctl apply -f resizer.yaml --dry-run=server
  tinyctl apply -f resizer.yaml --if-revision 7
  tinyctl apply -f resizer.yaml --wait --timeout 2m`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.run(cmd, o) },
	}
	a.files.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&a.dryRun, "dry-run", dryRunNone,
		`"client": show what would change without publishing; "server": also dry-run the rendered objects on the Kubernetes API server`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = dryRunClient
	cmd.Flags().Uint64Var(&a.ifRevision, "if-revision", 0,
		"publish only if the component is at this revision (0: only if it does not exist); one component only")
	cmd.Flags().BoolVar(&a.wait, "wait", false, "wait until every cluster the components are placed on runs the published revision (Ready)")
	addWaitTimeoutFlag(cmd.Flags(), &a.timeout)
	a.kube.AddFlags(cmd.Flags())
	a.cluster.addFlag(cmd.Flags())
	return cmd
}

func (a *applyOptions) run(cmd *cobra.Command, o *options) error {
	switch a.dryRun {
	case dryRunNone, dryRunClient, dryRunServer:
	default:
		return usageError{fmt.Errorf("--dry-run must be %q, %q or %q, not %q", dryRunNone, dryRunClient, dryRunServer, a.dryRun)}
	}
	if a.wait && a.dryRun != dryRunNone {
		return usageError{fmt.Errorf("--wait cannot be used with --dry-run: nothing is published to wait for")}
	}
	ctx, cancel := o.withTimeout(cmd.Context())
	defer cancel()
	view, err := a.cluster.view(ctx, o)
	if err != nil {
		return err
	}
	comps, err := a.files.load(cmd, o, "published", view.tenancy)
	if err != nil {
		return err
	}
	opts := client.PublishOptions{DryRun: a.dryRun != dryRunNone, Tenancy: view.tenancy}
	if cmd.Flags().Changed("if-revision") {
		if len(comps) != 1 {
			return usageError{fmt.Errorf("--if-revision applies to one component, not %d", len(comps))}
		}
		opts.IfRevision = &a.ifRevision
	}
	pv, err := a.preview(o)
	if err != nil {
		return err
	}
	// A dry run never creates the spec bucket: a missing one reads as empty.
	s, err := o.open(ctx, "", !opts.DryRun)
	if err != nil {
		return err
	}
	defer s.Close()
	published, err := a.publishAll(cmd.Context(), o, s.Client, pv, comps, opts, view)
	if err != nil || !a.wait {
		return err
	}
	return o.await(cmd.Context(), s.Client, published, api.ConditionReady, a.timeout)
}

// publishAll publishes comps in order, each within --request-timeout (not
// all of them: a file of 10,000 components takes longer), stopping at the
// first error. Progress goes to standard error on a long publish; a
// summary of more than one component ends the output. It returns the
// revisions published (or found unchanged).
func (a *applyOptions) publishAll(ctx context.Context, o *options, s *client.Client, pv *preview.Preview, comps []manifest.Component, opts client.PublishOptions, view clusterView) ([]progress.Target, error) {
	p := newPublishProgress(o.errOut, o.now, len(comps))
	published := make([]progress.Target, 0, len(comps))
	for i, c := range comps {
		pctx, cancel := o.withTimeout(ctx)
		res, err := a.publishOne(pctx, o, s, pv, c, opts, view)
		cancel()
		if err != nil {
			if i > 0 {
				return nil, fmt.Errorf("%w\n%d of %d components were applied before it (%s); the rest were not", err, i, len(comps), p.summary())
			}
			return nil, err
		}
		p.add(res.Action)
		published = append(published, progress.Target{Key: res.Key, Revision: res.Revision})
	}
	switch {
	case len(comps) > 1 && opts.DryRun:
		fmt.Fprintf(o.out, "Done: %s (dry run).\n", p.summary())
	case len(comps) > 1:
		fmt.Fprintf(o.out, "Done: %s.\n", p.summary())
	}
	return published, nil
}

// preview connects to the API server for --dry-run=server, else is nil.
func (a *applyOptions) preview(o *options) (*preview.Preview, error) {
	if a.dryRun != dryRunServer {
		return nil, nil
	}
	cfg, err := a.kube.RESTConfig(o.nats.RequestTimeout, o.errOut)
	if err != nil {
		return nil, err
	}
	return preview.New(cfg)
}

// publishOne publishes c (or decides what publishing would do) and prints
// the outcome, then the server dry-run of its objects when asked. It
// returns what it did, or would do, to c.
func (a *applyOptions) publishOne(ctx context.Context, o *options, s *client.Client, pv *preview.Preview, c manifest.Component, opts client.PublishOptions, view clusterView) (client.PublishResult, error) {
	res, err := s.Publish(ctx, c.Component, opts)
	if err != nil {
		return res, err
	}
	st := o.style()
	did := string(res.Action)
	if res.Action != action.Unchanged {
		did = st.Green(did)
	}
	switch a.dryRun {
	case dryRunNone:
		fmt.Fprintf(o.out, "component/%s %s (revision %d)\n", res.Key, did, res.Revision)
		return res, nil
	case dryRunClient:
		fmt.Fprintf(o.out, "component/%s %s (dry run)\n", res.Key, did)
		return res, nil
	}
	fmt.Fprintf(o.out, "component/%s %s (server dry run)\n", res.Key, did)
	comp, err := view.resolve(c.Component)
	if err != nil {
		return res, err
	}
	p := o.progress("dry-running component " + c.Key + " on the API server")
	results, err := pv.DryRunComponent(ctx, comp, res.Revision, view.render)
	p.Stop()
	for _, r := range results {
		if r.Note != "" {
			fmt.Fprintf(o.out, "  %s %s\n", r.Ref, st.Yellow(r.Note))
			continue
		}
		fmt.Fprintf(o.out, "  %s accepted by the API server\n", r.Ref)
	}
	return res, err
}
