//go:build !noinstall

package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/provision"
)

// uninstallFlags are the flags of `tinyctl uninstall`.
type uninstallFlags struct {
	runtime  runtimeFlags
	keepData bool
}

func newUninstallCmd(o *options) *cobra.Command {
	f := &uninstallFlags{}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove the tinyctl runtime from a Kubernetes cluster",
		Long: `uninstall removes what install created and nothing else: the controller,
collector and broker releases (and any chart install added from a repository),
the broker's token Secret and JetStream volumes, tinyctl's CRDs when no object
of their kind is left, and the runtime namespace when install created it and
nothing else is in it. Components' Deployments, NetworkPolicies and
ScaledObjects are left running.

--keep-data keeps the broker's volumes, its token and the namespace, so a later
install finds the component specs and streams again.`,
		Example: `  tinyctl uninstall
  tinyctl uninstall --keep-data`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd.Context(), o) },
	}
	f.runtime.addFlags(cmd.Flags(), "wait until each release's objects are gone")
	cmd.Flags().BoolVar(&f.keepData, "keep-data", false, "keep the broker's JetStream volumes, token Secret and the namespace")
	return cmd
}

func (f *uninstallFlags) run(ctx context.Context, o *options) error {
	p, err := f.runtime.provisioner(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "Removing the tinyctl runtime from namespace %s\n", p.Namespace())
	results, err := p.Uninstall(ctx, provision.UninstallOptions{KeepData: f.keepData}, printResult(o.out))
	if err != nil {
		return fmt.Errorf("uninstall: %w", err)
	}
	fmt.Fprintf(o.out, "Done: %s.\n", summary(results))
	return nil
}
