package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/preview"
)

func newDiffCmd(o *options) *cobra.Command {
	var (
		files   fileFlags
		kube    cli.KubeFlags
		cluster = clusterFlag{live: true}
	)
	cmd := &cobra.Command{
		Use:   "diff -f FILE|DIR|-",
		Short: "Show how the cluster would change if the components were reconciled",
		Long: `Diff renders each component given with -f the way the cluster's controller
would — with the settings the controller of cluster "default" reports in its
heartbeat when NATS (--nats-url, TINYCTL_NATS_URL) has it, else with those of a
default install; with --cluster, with the settings that cluster reports — with
the overrides that select that cluster merged in,
server-side dry-runs every object on the Kubernetes API server, and
prints a unified diff between the live object and the dry-run result. Fields
the API server manages (managedFields, resourceVersion, generation, uid,
creationTimestamp, status) and tinyctl's revision and cluster annotations are
ignored. A ScaledObject the component no longer wants shows as removed.

Exit status: 0 no differences, 1 differences found, 2 usage error, 3 any other
error (invalid component, API server unreachable or refusing an object).`,
		Example: `  tinyctl diff -f resizer.yaml --context prod`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			found, err := diffRun(cmd, o, &files, &kube, &cluster)
			switch {
			case err != nil && !isUsageError(err):
				return exitCodeError{code: exitDiffError, err: err}
			case err != nil:
				return err
			case found:
				return exitCodeError{code: exitDiffFound}
			}
			return nil
		},
	}
	files.addFlags(cmd.Flags())
	kube.AddFlags(cmd.Flags())
	cluster.addFlag(cmd.Flags())
	return cmd
}

// diffRun prints the diffs and reports whether there were any.
func diffRun(cmd *cobra.Command, o *options, files *fileFlags, kube *cli.KubeFlags, cluster *clusterFlag) (bool, error) {
	ctx, cancel := o.withTimeout(cmd.Context())
	defer cancel()
	view, err := cluster.view(ctx, o)
	if err != nil {
		return false, err
	}
	comps, err := files.load(cmd, o, "compared", view.tenancy)
	if err != nil {
		return false, err
	}
	cfg, err := kube.RESTConfig(o.nats.RequestTimeout, o.errOut)
	if err != nil {
		return false, err
	}
	pv, err := preview.New(cfg)
	if err != nil {
		return false, err
	}
	found := false
	var errs []error
	for _, c := range comps {
		comp, err := view.resolve(c.Component)
		if err != nil {
			errs = append(errs, fmt.Errorf("component %s: %w", c.Key, err))
			continue
		}
		p := o.progress("comparing component " + c.Key + " with the cluster")
		results, err := pv.DiffComponent(ctx, comp, view.render)
		p.Stop()
		for _, r := range results {
			found = printDiff(o, r) || found
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("component %s: %w", c.Key, err))
		}
	}
	return found, errors.Join(errs...)
}

// printDiff prints one object's diff (coloured on a terminal) or note and
// reports whether it differed.
func printDiff(o *options, r preview.Result) bool {
	if r.Note != "" {
		fmt.Fprintf(o.errOut, "%s %s\n", r.Ref, r.Note)
		return false
	}
	if r.Diff == "" {
		return false
	}
	st := o.style()
	for _, line := range strings.SplitAfter(r.Diff, "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			line = st.Bold(line)
		case strings.HasPrefix(line, "+"):
			line = st.Green(line)
		case strings.HasPrefix(line, "-"):
			line = st.Red(line)
		case strings.HasPrefix(line, "@@"):
			line = st.Cyan(line)
		}
		fmt.Fprint(o.out, line)
	}
	return true
}
