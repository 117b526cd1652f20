package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

// listing is what list (and get without NAME) is asked to show.
type listing struct {
	output   string
	all      bool
	selector string
}

func (l *listing) addFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&l.all, "all-namespaces", "A", false, "list the components of every namespace")
	addSelectorFlag(cmd, &l.selector)
}

// addSelectorFlag registers -l.
func addSelectorFlag(cmd *cobra.Command, target *string) {
	cmd.Flags().StringVarP(target, "selector", "l", "",
		"only components whose metadata.labels match this label selector (team=media, 'tier in (batch,bulk)', !canary)")
}

// parseSelector reads -l; a selector that does not parse is a usage error.
func parseSelector(s string) (labels.Selector, error) {
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, usageError{fmt.Errorf("--selector %q: %w", s, err)}
	}
	return sel, nil
}

func newListCmd(o *options) *cobra.Command {
	l := &listing{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the components of a namespace, or of all namespaces",
		Long: `List prints one row per component: NAMESPACE NAME IMAGE SCALING REVISION AGE,
where AGE is the time since the current revision was published. -o json and
-o yaml print a ComponentList (see docs/cli.md); -o name prints
component/NAMESPACE.NAME, one per line. -l keeps the components whose labels
match a Kubernetes label selector.`,
		Example: `  tinyctl list
  tinyctl list -A -o json
  tinyctl list -A -l team=media -o name`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return l.run(cmd.Context(), o) },
	}
	addOutputFlag(cmd, &l.output, "table", listFormats...)
	l.addFlags(cmd)
	return cmd
}

var listFormats = []cli.Format{cli.FormatTable, cli.FormatWide, cli.FormatYAML, cli.FormatJSON, cli.FormatJSONPath, cli.FormatName}

// run prints the components of the selected namespace (or all) that the
// selector matches.
func (l *listing) run(ctx context.Context, o *options) error {
	f, err := format(l.output, cli.FormatTable, listFormats...)
	if err != nil {
		return err
	}
	sel, err := parseSelector(l.selector)
	if err != nil {
		return err
	}
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	entries, err := o.listEntries(ctx, l.all)
	if err != nil {
		return err
	}
	if !sel.Empty() {
		entries = slices.DeleteFunc(entries, func(e client.Revision) bool { return !selects(sel, e.Value) })
	}
	switch f.Kind() {
	case cli.FormatName:
		for _, e := range entries {
			fmt.Fprintf(o.out, "component/%s\n", e.Key)
		}
		return nil
	case cli.FormatJSON, cli.FormatYAML, cli.FormatJSONPath:
		items := make([]cli.Item, 0, len(entries))
		for _, e := range entries {
			items = append(items, cli.NewItem(e))
		}
		return writeStructured(o, f, cli.NewList(cli.ListKind, items))
	}
	if len(entries) == 0 {
		where := fmt.Sprintf("namespace %q", o.namespace)
		if l.all {
			where = "any namespace"
		}
		if !sel.Empty() {
			where += " with labels " + sel.String()
		}
		fmt.Fprintf(o.errOut, "No components found in %s.\n", where)
		return nil
	}
	t := componentTable(o, f == cli.FormatWide)
	for _, e := range entries {
		componentRow(t, o, e, f == cli.FormatWide)
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

// selects reports whether a stored component's labels match sel; a value
// that does not decode matches no selector.
func selects(sel labels.Selector, value []byte) bool {
	c, err := decode.Component(value)
	return err == nil && sel.Matches(labels.Set(c.Metadata.Labels))
}

// writeStructured prints v as JSON, YAML or a jsonpath template's output.
func writeStructured(o *options, f cli.Format, v any) error { return cli.WriteData(o.out, f, v) }
