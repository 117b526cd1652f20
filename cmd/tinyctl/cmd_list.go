package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

func newListCmd(o *options) *cobra.Command {
	var (
		output string
		all    bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the components of a namespace, or of all namespaces",
		Long: `List prints one row per component: NAMESPACE NAME IMAGE SCALING REVISION AGE,
where AGE is the time since the current revision was published. -o json and
-o yaml print a ComponentList (see docs/cli.md).`,
		Example: `  tinyctl list
  tinyctl list -A -o json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return listRun(cmd.Context(), o, output, all) },
	}
	addOutputFlag(cmd, &output, "table", cli.FormatTable, cli.FormatYAML, cli.FormatJSON)
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the components of every namespace")
	return cmd
}

// listRun prints the components of the selected namespace (or all).
func listRun(ctx context.Context, o *options, output string, all bool) error {
	f, err := format(output, cli.FormatTable, cli.FormatTable, cli.FormatYAML, cli.FormatJSON)
	if err != nil {
		return err
	}
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	entries, err := o.listEntries(ctx, all)
	if err != nil {
		return err
	}
	switch f {
	case cli.FormatJSON, cli.FormatYAML:
		items := make([]cli.Item, 0, len(entries))
		for _, e := range entries {
			items = append(items, cli.NewItem(e))
		}
		return writeStructured(o, f, cli.NewList(cli.ListKind, items))
	}
	if len(entries) == 0 {
		where := fmt.Sprintf("namespace %q", o.namespace)
		if all {
			where = "any namespace"
		}
		fmt.Fprintf(o.errOut, "No components found in %s.\n", where)
		return nil
	}
	t := componentTable(o)
	for _, e := range entries {
		componentRow(t, o, e)
	}
	return t.Flush()
}

// listEntries returns the latest value of every component of the selected
// namespace, or of all namespaces, sorted by key.
func (o *options) listEntries(ctx context.Context, all bool) ([]client.Revision, error) {
	s, err := o.open(ctx, "", false)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	entries, err := s.List(ctx)
	if err != nil || all {
		return entries, err
	}
	var out []client.Revision
	for _, e := range entries {
		if ns, _, err := api.ParseKey(e.Key); err == nil && ns == o.namespace {
			out = append(out, e)
		}
	}
	return out, nil
}

// writeStructured prints v as JSON or YAML.
func writeStructured(o *options, f cli.Format, v any) error {
	if f == cli.FormatJSON {
		return cli.WriteJSON(o.out, v)
	}
	return cli.WriteYAML(o.out, v)
}
