package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

type deleteOptions struct {
	yes   bool
	purge bool
}

func newDeleteCmd(o *options) *cobra.Command {
	d := &deleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a component (the controller then removes what it made)",
		Long: `Delete shows what deleting the component removes — its Deployment,
NetworkPolicy and ScaledObject, and whether its stream and queued jobs are
kept (spec.deletion.stream: Retain) or deleted — and asks for confirmation.
It writes a delete marker: the history is kept and "tinyctl rollback" brings
the component back. --purge erases the history too.

Without a terminal to ask on, delete refuses unless --yes is given.`,
		Example: `  tinyctl delete resizer -n media
  tinyctl delete resizer -n media --yes`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE:              func(cmd *cobra.Command, args []string) error { return d.run(cmd, o, args[0]) },
	}
	cmd.Flags().BoolVarP(&d.yes, "yes", "y", false, "delete without asking for confirmation")
	cmd.Flags().BoolVar(&d.purge, "purge", false, "also erase the component's history (it cannot be rolled back)")
	return cmd
}

func (d *deleteOptions) run(cmd *cobra.Command, o *options, name string) error {
	key, err := o.key(name)
	if err != nil {
		return err
	}
	ctx, cancel := o.withTimeout(cmd.Context())
	e, err := o.getEntry(ctx, name)
	cancel()
	if err != nil {
		return err
	}
	client.PlanRemoval(e).Describe(o.out, d.purge)
	if err := d.confirm(cmd, o, key); err != nil {
		return err
	}
	ctx, cancel = o.withTimeout(cmd.Context())
	defer cancel()
	return d.remove(ctx, o, name, e)
}

// confirm asks on the terminal unless --yes was given; without a terminal
// it refuses.
func (d *deleteOptions) confirm(cmd *cobra.Command, o *options, key string) error {
	if d.yes {
		return nil
	}
	in := cmd.InOrStdin()
	if !cli.IsTerminal(in) {
		return usageError{fmt.Errorf("refusing to delete component %s without confirmation: standard input is not a terminal; pass --yes to delete from a script", key)}
	}
	fmt.Fprintf(o.out, "Delete component %s? [y/N]: ", key)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("delete of component %s cancelled; nothing was deleted", key)
}

// remove writes the delete (or purge) marker, only if the component is
// still at the revision that was shown.
func (d *deleteOptions) remove(ctx context.Context, o *options, name string, e kv.Entry) error {
	s, err := o.open(ctx, "", false)
	if err != nil {
		return err
	}
	defer s.Close()
	verb := "deleted"
	if d.purge {
		verb = "purged"
	}
	err = s.Delete(ctx, o.namespace, name, client.DeleteOptions{IfRevision: e.Revision, Purge: d.purge})
	var mismatch *client.ConflictError
	if errors.As(err, &mismatch) {
		return fmt.Errorf("component %s changed while deleting (now revision %d, shown %d); nothing was deleted", e.Key, mismatch.Current, e.Revision)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "component/%s %s\n", e.Key, verb)
	return nil
}
