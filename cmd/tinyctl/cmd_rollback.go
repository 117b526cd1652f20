package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/client"
)

func newRollbackCmd(o *options) *cobra.Command {
	var to uint64
	cmd := &cobra.Command{
		Use:   "rollback NAME",
		Short: "Publish an earlier revision of a component again",
		Long: `Rollback re-publishes the value of an earlier revision as a new revision; the
history keeps everything. Without --to-revision it restores the most recent
earlier value that differs from the current one; if the component was deleted,
it restores the last value before the delete. If the component already holds
that value, nothing is written.`,
		Example: `  tinyctl rollback resizer -n media
  tinyctl rollback resizer -n media --to-revision 3`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return rollbackRun(cmd.Context(), o, args[0], to)
		},
	}
	cmd.Flags().Uint64Var(&to, "to-revision", 0, "revision to restore (default: the previous value)")
	return cmd
}

func rollbackRun(ctx context.Context, o *options, name string, to uint64) error {
	return o.withComponent(ctx, name, func(ctx context.Context, key string, s *session) error {
		return rollback(ctx, o, s, key, name, to)
	})
}

func rollback(ctx context.Context, o *options, s *session, key, name string, to uint64) error {
	res, err := s.Rollback(ctx, o.namespace, name, to)
	switch {
	case errors.Is(err, client.ErrNotFound):
		return o.notFound(name)
	case err != nil:
		return err
	case res.Unchanged:
		fmt.Fprintf(o.out, "component/%s unchanged: revision %d already holds the value of revision %d\n", key, res.Revision, res.Target)
	default:
		fmt.Fprintf(o.out, "component/%s rolled back to revision %d (new revision %d)\n", key, res.Target, res.Revision)
	}
	return nil
}
