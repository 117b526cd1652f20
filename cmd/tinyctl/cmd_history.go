package main

import (
	"context"
	"errors"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

func newHistoryCmd(o *options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "Show the kept revisions of a component",
		Long: `History prints one row per kept revision of the component, oldest first:
REVISION OP AGE IMAGE CHANGE, where CHANGE names the fields that changed since
the previous value. The bucket keeps a limited number of revisions per key
(16 by default). -o json and -o yaml print a ComponentHistory (see docs/cli.md).`,
		Example:           `  tinyctl history resizer -n media`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return historyRun(cmd.Context(), o, args[0], output)
		},
	}
	addOutputFlag(cmd, &output, "table", cli.FormatTable, cli.FormatYAML, cli.FormatJSON, cli.FormatJSONPath)
	return cmd
}

func historyRun(ctx context.Context, o *options, name, output string) error {
	f, err := format(output, cli.FormatTable, cli.FormatTable, cli.FormatYAML, cli.FormatJSON, cli.FormatJSONPath)
	if err != nil {
		return err
	}
	return o.withComponent(ctx, name, func(ctx context.Context, _ string, s *session) error {
		return history(ctx, o, s, name, f)
	})
}

func history(ctx context.Context, o *options, s *session, name string, f cli.Format) error {
	hist, err := s.History(ctx, o.namespace, name)
	if errors.Is(err, client.ErrNotFound) {
		return o.notFound(name)
	}
	if err != nil {
		return err
	}
	if f != cli.FormatTable {
		items := make([]cli.Item, 0, len(hist))
		for _, e := range hist {
			items = append(items, cli.NewItem(e))
		}
		return writeStructured(o, f, cli.NewList(cli.HistoryKind, items))
	}
	t := cli.NewTable(o.out, "REVISION", "OP", "AGE", "IMAGE", "CHANGE")
	for _, c := range client.Changes(hist, s.KeptRevisions()) {
		t.Row(strconv.FormatUint(c.Revision, 10), c.Operation, cli.Age(c.Time, o.now()), orDash(c.Image), c.Summary)
	}
	return t.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
