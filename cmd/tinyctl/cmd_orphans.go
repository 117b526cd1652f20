package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/statusview"
)

func newOrphansCmd(o *options) *cobra.Command {
	var (
		output, statusBucket string
		all                  bool
	)
	cmd := &cobra.Command{
		Use:   "orphans",
		Short: "List components whose children exist in a cluster but whose spec is missing",
		Long: `Orphans lists the components a cluster's controller reports as orphaned: their
children (a Deployment, a NetworkPolicy, a ScaledObject) exist in the cluster,
but the spec bucket holds neither a value nor a delete marker for them, as
after the bucket was emptied or recreated. The controller keeps such children
and never deletes them by itself. Publish the spec again and the controller
adopts them, or delete them by hand; standard error says how for each.
-o json and -o yaml print an OrphanList (see docs/cli.md).`,
		Example: `  tinyctl orphans -A
  tinyctl orphans -n media -o json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return orphansRun(cmd.Context(), o, output, statusBucket, all)
		},
	}
	addOutputFlag(cmd, &output, "table", cli.FormatTable, cli.FormatYAML, cli.FormatJSON)
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the orphans of every namespace")
	addStatusBucketFlag(cmd.Flags(), &statusBucket)
	return cmd
}

func orphansRun(ctx context.Context, o *options, output, statusBucket string, all bool) error {
	form, err := format(output, cli.FormatTable, cli.FormatTable, cli.FormatYAML, cli.FormatJSON)
	if err != nil {
		return err
	}
	sel, err := o.selector(nil, all)
	if err != nil {
		return err
	}
	src, closeSrc, err := o.openStatusView(ctx, statusBucket, false)
	if err != nil {
		return err
	}
	defer closeSrc()
	var now time.Time
	rows, err := o.readRows(ctx, src, func(snap client.Snapshot) []client.Row {
		now = snap.Now
		return client.Orphans(snap, sel)
	})
	if err != nil {
		return err
	}
	switch form {
	case cli.FormatJSON, cli.FormatYAML:
		return writeStructured(o, form, statusview.NewOrphanList(rows))
	}
	if len(rows) == 0 {
		fmt.Fprintf(o.errOut, "No orphans in %s.\n", o.where(sel))
		return nil
	}
	if err := statusview.WriteOrphanTable(o.out, o.style(), rows, now); err != nil {
		return err
	}
	for _, r := range rows {
		fmt.Fprintln(o.errOut, statusview.Hint(r))
	}
	return nil
}
