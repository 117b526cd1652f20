package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// Exit codes shared by every command.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run builds the command tree, executes it with args and maps the outcome to
// an exit code. Output goes to out and errOut so tests can capture it.
func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	root := newRootCmd(out, errOut)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	ce, hasCode := exitCode(err)
	if hasCode && ce.err == nil {
		return ce.code // the command has said all there is to say
	}
	fmt.Fprintln(errOut, "Error:", err)
	switch {
	case isUsageError(err):
		fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return exitUsage
	case hasCode:
		return ce.code
	}
	return exitError
}

func newRootCmd(out, errOut io.Writer) *cobra.Command {
	o := &options{out: out, errOut: errOut, getenv: os.Getenv, now: time.Now}
	root := &cobra.Command{
		Use:   "tinyctl",
		Short: "A NATS-native control plane for queue workers on Kubernetes",
		Long: `tinyctl keeps worker components in a NATS JetStream KV bucket and reconciles
each one into a JetStream work-queue stream and durable consumer, a hardened
Deployment, a NetworkPolicy and a KEDA ScaledObject.`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		Args:              usageArgs(noSubcommand),
		PersistentPreRunE: o.applyEnv,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetOut(out)
	root.SetErr(errOut)
	o.addGlobalFlags(root.PersistentFlags())
	root.AddCommand(newVersionCmd(),
		newApplyCmd(o), newGetCmd(o), newListCmd(o), newDescribeCmd(o), newEventsCmd(o), newDeleteCmd(o),
		newHistoryCmd(o), newRollbackCmd(o), newSuspendCmd(o), newResumeCmd(o), newJobsCmd(o), newRenderCmd(o), newDiffCmd(o),
		newServeCmd(o), newDevCmd(o))
	root.AddCommand(newStatusCmd(o), newOrphansCmd(o), newClustersCmd(o), newFleetCmd(o))
	root.AddCommand(runtimeCmds(o)...)
	strictCompletion(root)
	return root
}

// usageError marks errors caused by how a command was called (exit code 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// isUsageError reports whether err came from bad flags or arguments.
func isUsageError(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

// usageArgs wraps a positional-argument check so its failures exit with 2.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// noSubcommand rejects words that are not a known command.
func noSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return nil
}
