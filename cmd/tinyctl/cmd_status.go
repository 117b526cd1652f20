package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/client/progress"
	"github.com/tinyctl/tinyctl/client/queues"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/statusview"
)

// clearScreen moves the cursor home and clears a terminal, so that each
// render of `status --watch` replaces the previous one.
const clearScreen = "\x1b[H\x1b[2J"

type statusFlags struct {
	output       string
	all, watch   bool
	queues       bool
	selector     string
	statusBucket string
	waitFor      string
	timeout      time.Duration
}

func newStatusCmd(o *options) *cobra.Command {
	f := &statusFlags{}
	cmd := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show how far each cluster has reconciled the components",
		Long: `Status prints one row per component per cluster: NAMESPACE NAME CLUSTER
READY REASON REVISION AGE HEARTBEAT. REVISION is observed/latest: the spec
revision the cluster last reconciled and the latest one published. AGE is the
time since the cluster wrote the status. HEARTBEAT is "stale" when the
cluster's controller stopped beating: its status may no longer be true. A
component no cluster has reported on shows CLUSTER "-" and READY Unknown.
A warning on stderr names the clusters whose controller finds no running KEDA
operator while components there ask to be scaled (spec.scaling): they will not
scale until KEDA is installed (tinyctl install --with-keda).
--watch prints the view again whenever it changes, until interrupted.
--queues shows each row's queue instead of REASON, REVISION and AGE: the jobs
its stream holds, how many no worker has been handed yet (PENDING), how many
are being worked on (ACK-PENDING), how many of those were handed out more
than once (REDELIVERED) and the oldest job's age. They are read on the broker
this command reaches; at a fleet hub, which holds no queue, each row's
cluster's controller is asked for its own.
-o json and -o yaml print a StatusList (see docs/cli.md).

--wait-for=Ready (or Applied) waits, as kubectl wait does, until every
live cluster that places each selected component reports the condition True
at its latest revision, then prints one line per component and cluster. It
exits 1 with what each cluster reports at --timeout, or at once when one
reports what waiting cannot change (Stalled, ProgressDeadlineExceeded).
Ready: the children are applied and the pods run the revision (or are scaled
to zero). Applied: the children are applied, whatever the pods do.`,
		Example: `  tinyctl status -A
  tinyctl status resizer -n media
  tinyctl status -n media --watch
  tinyctl status -A --queues
  tinyctl status -A -l team=media --wait-for=Ready
  tinyctl status resizer -n media --wait-for=Ready --timeout 2m`,
		Args:              usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd.Context(), o, args)
		},
	}
	addOutputFlag(cmd, &f.output, "table", statusFormats...)
	cmd.Flags().BoolVarP(&f.all, "all-namespaces", "A", false, "show the components of every namespace")
	addSelectorFlag(cmd, &f.selector)
	cmd.Flags().BoolVarP(&f.watch, "watch", "w", false, "print the view again whenever it changes, until interrupted")
	cmd.Flags().BoolVar(&f.queues, "queues", false, "show each row's queue (JOBS PENDING ACK-PENDING REDELIVERED OLDEST) instead of REASON REVISION AGE: read on the broker reached, or at a fleet hub asked of each row's cluster")
	cmd.Flags().StringVar(&f.waitFor, "wait-for", "", "wait until the condition (Ready or Applied) is True on every cluster that places the components")
	addWaitTimeoutFlag(cmd.Flags(), &f.timeout)
	addStatusBucketFlag(cmd.Flags(), &f.statusBucket)
	return cmd
}

// addStatusBucketFlag registers --status-bucket.
func addStatusBucketFlag(fs *pflag.FlagSet, target *string) {
	fs.StringVar(target, "status-bucket", status.DefaultBucket, "JetStream KV bucket holding the status records")
	cli.BindEnv(fs, "status-bucket", "TINYCTL_STATUS_BUCKET")
}

func (f *statusFlags) run(ctx context.Context, o *options, args []string) error {
	form, err := format(f.output, cli.FormatTable, statusFormats...)
	if err != nil {
		return err
	}
	sel, err := o.selector(args, f.all)
	if err != nil {
		return err
	}
	if f.selector != "" && sel.Name != "" {
		return usageError{errors.New("--selector cannot be used with a NAME")}
	}
	if sel.Labels, err = parseSelector(f.selector); err != nil {
		return err
	}
	if f.queues && (f.watch || f.waitFor != "") {
		return usageError{errors.New("--queues cannot be used with --watch or --wait-for")}
	}
	if f.waitFor != "" {
		return f.waitForCondition(ctx, o, sel)
	}
	src, closeSrc, err := o.openStatusView(ctx, f.statusBucket, f.watch)
	if err != nil {
		return err
	}
	defer closeSrc()
	// The view also notes, for after each render, the clusters whose
	// controller reports no KEDA operator under scaled components.
	var warnings []string
	var now time.Time // the server's clock at the snapshot shown
	view := func(snap client.Snapshot) []client.Row {
		now = snap.Now
		rows := client.Rows(snap, sel)
		warnings = statusview.KEDAWarnings(client.WithoutKEDA(snap, rows))
		return rows
	}
	warn := func() {
		for _, w := range warnings {
			o.warn(w)
		}
	}
	if !f.watch {
		rows, err := o.readRows(ctx, src, view)
		if err != nil {
			return err
		}
		defer warn()
		if f.queues {
			return o.printStatusQueues(ctx, src, form, sel, rows, now)
		}
		return o.printStatus(form, sel, rows, false, now)
	}
	return o.watchStatus(ctx, src, view, form, sel, warn, func() time.Time { return now })
}

// selector picks the components named by args in the selected namespace,
// or every namespace with -A.
func (o *options) selector(args []string, all bool) (client.Selector, error) {
	switch {
	case len(args) == 0 && all:
		return client.Selector{}, nil
	case len(args) == 0:
		return client.Selector{Namespace: o.namespace}, nil
	case all:
		return client.Selector{}, usageError{errors.New("--all-namespaces cannot be used with a NAME")}
	}
	if _, err := o.key(args[0]); err != nil {
		return client.Selector{}, err
	}
	return client.Selector{Namespace: o.namespace, Name: args[0]}, nil
}

// openStatusView connects and opens the spec, status and heartbeat
// buckets; create makes missing buckets (a watch needs them). Call close
// when done.
func (o *options) openStatusView(ctx context.Context, statusBucket string, create bool) (*session, func(), error) {
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	s, err := o.open(ctx, statusBucket, create)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

// readRows reads one snapshot and returns its view.
func (o *options) readRows(ctx context.Context, src *session, view func(client.Snapshot) []client.Row) ([]client.Row, error) {
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	snap, err := src.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return view(snap), nil
}

// printStatus prints rows in form. again marks a later render of a watch:
// it is separated from the previous one, and a named component without
// rows is reported gone rather than not found. now is the server's clock
// (heartbeat ages are measured by it).
func (o *options) printStatus(form cli.Format, sel client.Selector, rows []client.Row, again bool, now time.Time) error {
	if sel.Name != "" && len(rows) == 0 && !again {
		return o.notFound(sel.Name)
	}
	switch form.Kind() {
	case cli.FormatJSON, cli.FormatJSONPath:
		return cli.WriteData(o.out, form, statusview.NewStatusList(rows))
	case cli.FormatYAML:
		if again {
			fmt.Fprintln(o.out, "---")
		}
		return cli.WriteYAML(o.out, statusview.NewStatusList(rows))
	}
	if again {
		separate(o.out)
	}
	switch {
	case len(rows) == 0 && sel.Name != "":
		fmt.Fprintf(o.errOut, "Component %q no longer exists in namespace %q.\n", sel.Name, sel.Namespace)
		return nil
	case len(rows) == 0:
		fmt.Fprintf(o.errOut, "No components found in %s.\n", o.where(sel))
		return nil
	}
	if form == cli.FormatWide {
		return statusview.WriteWideTable(o.out, o.style(), rows, now)
	}
	return statusview.WriteTable(o.out, o.style(), rows, now)
}

// printStatusQueues prints rows with each one's queue (status --queues)
// in form, and warns of each reason a queue could not be read.
func (o *options) printStatusQueues(ctx context.Context, src *session, form cli.Format, sel client.Selector, rows []client.Row, now time.Time) error {
	if sel.Name != "" && len(rows) == 0 {
		return o.notFound(sel.Name)
	}
	r, err := queues.New(src.conn.NATS(), src.Namespace())
	if err != nil {
		return err
	}
	readings := readRowQueues(ctx, r, rows)
	switch form.Kind() {
	case cli.FormatJSON, cli.FormatJSONPath:
		return cli.WriteData(o.out, form, statusview.NewStatusList(rows).WithQueues(readings))
	case cli.FormatYAML:
		return cli.WriteYAML(o.out, statusview.NewStatusList(rows).WithQueues(readings))
	}
	if len(rows) == 0 {
		fmt.Fprintf(o.errOut, "No components found in %s.\n", o.where(sel))
		return nil
	}
	problems, err := statusview.WriteQueueTable(o.out, o.style(), rows, readings, now)
	for _, p := range problems {
		o.warn(p)
	}
	return err
}

// statusFormats are status's -o values.
var statusFormats = []cli.Format{cli.FormatTable, cli.FormatWide, cli.FormatYAML, cli.FormatJSON, cli.FormatJSONPath}

// separate clears a terminal before a watch's next table, or leaves a
// blank line elsewhere.
func separate(w io.Writer) {
	if cli.IsTerminal(w) {
		fmt.Fprint(w, clearScreen)
		return
	}
	fmt.Fprintln(w)
}

// where names the namespaces (and labels) a selector shows, for messages.
func (o *options) where(sel client.Selector) string {
	w := fmt.Sprintf("namespace %q", sel.Namespace)
	if sel.Namespace == "" {
		w = "any namespace"
	}
	if sel.Labels != nil && !sel.Labels.Empty() {
		w += " with labels " + sel.Labels.String()
	}
	return w
}

// watchStatus prints the view, then again on every change, until ctx is
// cancelled (Ctrl-C), which exits 0.
func (o *options) watchStatus(ctx context.Context, src *session, view func(client.Snapshot) []client.Row, form cli.Format, sel client.Selector,
	after func(), now func() time.Time) error {
	again := false
	opts := client.WatchOptions{ReadTimeout: o.nats.RequestTimeout, OnError: func(err error) { o.warn(err.Error()) }}
	return src.WatchStatus(ctx, view, opts, func(rows []client.Row) error {
		if err := o.printStatus(form, sel, rows, again, now()); err != nil {
			return err
		}
		after()
		again = true
		return nil
	})
}

// waitForCondition waits for --wait-for on the latest revision of every
// selected component.
func (f *statusFlags) waitForCondition(ctx context.Context, o *options, sel client.Selector) error {
	cond, err := waitCondition(f.waitFor)
	if err != nil {
		return err
	}
	if f.watch {
		return usageError{errors.New("--wait-for cannot be used with --watch")}
	}
	src, closeSrc, err := o.openStatusView(ctx, f.statusBucket, true)
	if err != nil {
		return err
	}
	defer closeSrc()
	rows, err := o.readRows(ctx, src, func(snap client.Snapshot) []client.Row { return client.Rows(snap, sel) })
	if err != nil {
		return err
	}
	var targets []progress.Target
	for _, r := range rows {
		if r.LatestRevision != 0 && !slices.ContainsFunc(targets, func(t progress.Target) bool { return t.Key == r.Key }) {
			targets = append(targets, progress.Target{Key: r.Key, Revision: r.LatestRevision})
		}
	}
	if len(targets) == 0 {
		if sel.Name != "" {
			return o.notFound(sel.Name)
		}
		return fmt.Errorf("no components found in %s", o.where(sel))
	}
	return o.await(ctx, src.Client, targets, cond, f.timeout)
}
