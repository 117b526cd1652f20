package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

type deleteOptions struct {
	yes   bool
	purge bool
	files fileFlags
}

func newDeleteCmd(o *options) *cobra.Command {
	d := &deleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete NAME | -f FILE|DIR|-",
		Short: "Delete a component (the controller then removes what it made)",
		Long: `Delete shows what deleting the component removes — its Deployment,
NetworkPolicy and ScaledObject, and whether its stream and queued jobs are
kept (spec.deletion.stream: Retain) or deleted — and asks for confirmation.
It writes a delete marker: the history is kept and "tinyctl rollback" brings
the component back. --purge erases the history too.

With -f, the components the documents name are deleted (the documents must
decode; their specs are not validated): all of them are looked up and shown
first, one confirmation covers them, and a name that does not exist deletes
nothing.

Without a terminal to ask on, delete refuses unless --yes is given.`,
		Example: `  tinyctl delete resizer -n media
  tinyctl delete resizer -n media --yes
  tinyctl delete -f examples/ --yes`,
		Args:              usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && len(d.files.paths) > 0:
				return usageError{errors.New("give a component NAME or -f, not both")}
			case len(args) == 1:
				return d.run(cmd, o, args[0])
			case len(d.files.paths) > 0:
				return d.runFiles(cmd, o)
			}
			return usageError{errors.New("give the NAME of the component to delete, or -f FILE|DIR|-")}
		},
	}
	d.files.addFlags(cmd.Flags())
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
	if err := d.confirm(cmd, o, "component "+key); err != nil {
		return err
	}
	ctx, cancel = o.withTimeout(cmd.Context())
	defer cancel()
	return d.remove(ctx, o, o.namespace, name, e)
}

// confirm asks on the terminal unless --yes was given; without a terminal
// it refuses.
func (d *deleteOptions) confirm(cmd *cobra.Command, o *options, what string) error {
	if d.yes {
		return nil
	}
	in := cmd.InOrStdin()
	if !cli.IsTerminal(in) {
		return usageError{fmt.Errorf("refusing to delete %s without confirmation: standard input is not a terminal; pass --yes to delete from a script", what)}
	}
	fmt.Fprintf(o.out, "Delete %s? [y/N]: ", what)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("delete of %s cancelled; nothing was deleted", what)
}

// remove writes the delete (or purge) marker, only if the component is
// still at the revision that was shown.
func (d *deleteOptions) remove(ctx context.Context, o *options, namespace, name string, e client.Revision) error {
	s, err := o.open(ctx, "", false)
	if err != nil {
		return err
	}
	defer s.Close()
	verb := "deleted"
	if d.purge {
		verb = "purged"
	}
	err = s.Delete(ctx, namespace, name, client.DeleteOptions{IfRevision: e.Revision, Purge: d.purge})
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
