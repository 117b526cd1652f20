package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/client/events"
	"github.com/tinyctl/tinyctl/client/queues"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/statusview"
)

type describeFlags struct {
	output, statusBucket string
}

func newDescribeCmd(o *options) *cobra.Command {
	f := &describeFlags{}
	cmd := &cobra.Command{
		Use:   "describe NAME",
		Short: "Show one component: its spec, each cluster's status, its queue and its children",
		Long: `Describe prints what there is to know of one component in one place: the
stored revision (image, subjects, scaling, labels, whether it is suspended),
each cluster's status row as "tinyctl status" shows it, its queue and the
Kubernetes objects a cluster that places it holds.

The queue is read from the broker this command is connected to: the jobs in
the component's stream (every job not yet acknowledged) and when the oldest
was published, how many no worker has been handed yet (pending), how many are
being worked on (ack pending) and how many of those were handed out more than
once (redelivered). A fleet hub holds no queue of its own: there, describe
asks the controller of each cluster that reported on the component for its
queue on that cluster, and shows each (or why it has none). The admin
publisher and a namespace publisher's credentials (tinyctl identity
publisher) may read them; credentials minted before this command existed
may not, and the queue section says so.
-o json and -o yaml print a Description (see docs/cli.md); -o jsonpath=TEMPLATE
picks fields of it, as kubectl does.`,
		Example: `  tinyctl describe resizer -n media
  tinyctl describe resizer -n media -o yaml`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd.Context(), o, args[0])
		},
	}
	addOutputFlag(cmd, &f.output, "text", cli.FormatText, cli.FormatYAML, cli.FormatJSON, cli.FormatJSONPath)
	addStatusBucketFlag(cmd.Flags(), &f.statusBucket)
	return cmd
}

func (f *describeFlags) run(ctx context.Context, o *options, name string) error {
	form, err := format(f.output, cli.FormatText, cli.FormatText, cli.FormatYAML, cli.FormatJSON, cli.FormatJSONPath)
	if err != nil {
		return err
	}
	if _, err := o.key(name); err != nil {
		return err
	}
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	s, err := o.open(ctx, f.statusBucket, false)
	if err != nil {
		return err
	}
	defer s.Close()
	e, err := s.Get(ctx, o.namespace, name)
	if errors.Is(err, client.ErrNotFound) {
		return o.notFound(name)
	}
	if err != nil {
		return err
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return err
	}
	rows := client.Rows(snap, client.Selector{Namespace: o.namespace, Name: name})
	r, err := queues.New(s.conn.NATS(), s.Namespace())
	if err != nil {
		return err
	}
	q, qerr := r.Read(ctx, o.namespace, name)
	evs, everr := readEvents(ctx, s, events.Selector{Namespace: o.namespace, Name: name})
	d := statusview.Describe(e, rows, q, queueProblem(qerr)).WithEvents(evs, everr)
	if clusters := reportingClusters(rows); perCluster(qerr, clusters) {
		// A fleet hub: each cluster that reported is asked for its own.
		for i, rd := range askClusters(ctx, r, o.namespace, name, clusters, map[string]error{}) {
			d = d.WithClusterQueue(clusters[i], rd)
		}
	}
	if form != cli.FormatText {
		return cli.WriteData(o.out, form, d)
	}
	return statusview.WriteDescription(o.out, o.style(), d, rows, snap.Now)
}

// readEvents reads the stored events sel picks on the session's
// connection.
func readEvents(ctx context.Context, s *session, sel events.Selector) ([]events.Event, error) {
	r, err := events.New(s.conn.NATS(), s.Namespace(), s.domain)
	if err != nil {
		return nil, err
	}
	var evs []events.Event
	err = r.Read(ctx, sel, func(e events.Event) error {
		evs = append(evs, e)
		return nil
	})
	return evs, eventsProblem(err)
}

// queueProblem says what a person can do about a queue that could not be
// read.
func queueProblem(err error) error {
	if errors.Is(err, queues.ErrNotFound) {
		return fmt.Errorf("%w: no controller has created it here yet, or the component runs on other clusters (a fleet hub holds no member's queues: each cluster that reported is asked below)", err)
	}
	return err
}
