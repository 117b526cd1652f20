package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/client"
)

func newSuspendCmd(o *options) *cobra.Command {
	return suspendCmd(o, true, "suspend", "Stop tinyctl changing a component (everywhere, or on one cluster)",
		`Suspend publishes a new revision of the component with spec.suspend: true
(with --cluster, an override suspending that cluster only). A controller then
applies, reverts and prunes nothing of the component: its workload runs on as it
is, an edit made by hand (kubectl) is left alone, and its status says Suspended
(tinyctl status). An explicit delete still removes it. Worker credentials are
not renewed while suspended. Nothing else of the spec changes; tinyctl resume
undoes it.`,
		`  tinyctl suspend resizer -n media
  tinyctl suspend resizer -n media --cluster eu-1`)
}

func newResumeCmd(o *options) *cobra.Command {
	return suspendCmd(o, false, "resume", "Let tinyctl reconcile a suspended component again",
		`Resume publishes a new revision of the component without suspend: with no
--cluster, spec.suspend and every override's suspend are cleared; with --cluster,
that cluster is resumed (an override, dropped again when it would repeat the
spec). The controllers then apply the latest spec, reverting edits made while it
was suspended.`,
		`  tinyctl resume resizer -n media
  tinyctl resume resizer -n media --cluster eu-1`)
}

func suspendCmd(o *options, suspend bool, use, short, long, example string) *cobra.Command {
	var cluster string
	cmd := &cobra.Command{
		Use: use + " NAME", Short: short, Long: long, Example: example,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return suspendRun(cmd.Context(), o, args[0], cluster, suspend)
		},
	}
	cmd.Flags().StringVar(&cluster, "cluster", "", "only this cluster (its --cluster-name); default: every cluster")
	return cmd
}

func suspendRun(ctx context.Context, o *options, name, cluster string, suspend bool) error {
	return o.withComponent(ctx, name, func(ctx context.Context, key string, s *session) error {
		return setSuspended(ctx, o, s, key, name, cluster, suspend)
	})
}

func setSuspended(ctx context.Context, o *options, s *session, key, name, cluster string, suspend bool) error {
	res, err := s.SetSuspended(ctx, o.namespace, name, cluster, suspend)
	var conflict *client.ConflictError
	switch {
	case errors.Is(err, client.ErrNotFound):
		return o.notFound(name)
	case errors.As(err, &conflict):
		return fmt.Errorf("component %s changed meanwhile (now revision %d); nothing was written, run it again", key, conflict.Current)
	case err != nil:
		return err
	}
	verb, where := map[bool]string{true: "suspended", false: "resumed"}[suspend], ""
	if cluster != "" {
		where = " on cluster " + cluster
	}
	if res.Action == action.Unchanged {
		fmt.Fprintf(o.out, "component/%s already %s%s (revision %d)\n", key, verb, where, res.Revision)
		return nil
	}
	fmt.Fprintf(o.out, "component/%s %s%s (revision %d)\n", key, verb, where, res.Revision)
	return nil
}
