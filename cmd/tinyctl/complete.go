package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/internal/cli"
)

// completionTimeout bounds how long shell completion waits for NATS.
const completionTimeout = 2 * time.Second

// completeNames completes a component NAME argument with the names stored
// in the selected namespace. It offers nothing when NATS is unreachable.
func (o *options) completeNames(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if err := cli.ApplyEnv(cmd.Flags(), o.getenv); err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	entries, err := o.listEntries(ctx, false)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError | cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, e := range entries {
		if _, name, err := api.ParseKey(e.Key); err == nil && strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// strictCompletion makes `tinyctl completion NOSUCHSHELL` a usage error
// instead of cobra's default of printing help and exiting 0. Call it once
// every command has been added.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Args = usageArgs(noSubcommand)
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
}
