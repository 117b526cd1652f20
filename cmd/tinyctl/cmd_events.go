package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/client/events"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/statusview"
)

type eventsFlags struct {
	output string
	watch  bool
	all    bool
	since  time.Duration
}

func newEventsCmd(o *options) *cobra.Command {
	f := &eventsFlags{}
	cmd := &cobra.Command{
		Use:   "events [NAME]",
		Short: "Show what the controllers did to components, and why",
		Long: `Events lists what each cluster's controller recorded about the components of a
namespace (or one component, or with -A every namespace), oldest first: each
child it created, configured or deleted, each condition that moved (Ready,
Degraded with the pods' reason, an invalid spec, a namespace it may not use),
and each component removed or unplaced. Warning events are the ones to act on.

Events are read from the broker this command reaches (its events stream,
tinyctl-events, keeps 24 hours and 100 events per component and cluster);
a fleet member's events stay on the member's broker. The controller also
publishes each one on tinyctl.events.<cluster>.<namespace>.<name>, and writes
it as a Kubernetes Event about the child written, else the component's
Deployment, or its namespace while it has none (kubectl events).
-o json prints one event per line (docs/events.md has the fields).`,
		Example: `  tinyctl events -n media
  tinyctl events resizer -n media -w
  tinyctl events -A --since 10m -o json`,
		Args:              usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd.Context(), o, args)
		},
	}
	cmd.Flags().BoolVarP(&f.watch, "watch", "w", false, "after the stored events, print each new one as it is recorded, until interrupted")
	cmd.Flags().BoolVarP(&f.all, "all-namespaces", "A", false, "the events of every namespace")
	cmd.Flags().DurationVar(&f.since, "since", time.Hour, "only events recorded within this long (0: every event kept)")
	addOutputFlag(cmd, &f.output, "table", cli.FormatTable, cli.FormatJSON)
	return cmd
}

func (f *eventsFlags) run(ctx context.Context, o *options, args []string) error {
	form, err := format(f.output, cli.FormatTable, cli.FormatTable, cli.FormatJSON)
	if err != nil {
		return err
	}
	if f.since < 0 {
		return usageError{fmt.Errorf("--since %s: want a duration of 0 or more", f.since)}
	}
	sel := events.Selector{Watch: f.watch}
	if !f.all {
		sel.Namespace = o.namespace
	}
	if len(args) == 1 {
		if f.all {
			return usageError{errors.New("--all-namespaces cannot be used with a NAME")}
		}
		if _, err := o.key(args[0]); err != nil {
			return err
		}
		sel.Name = args[0]
	}
	if f.since > 0 {
		sel.Since = o.now().Add(-f.since)
	}
	r, stop, err := o.openEvents(ctx)
	if err != nil {
		return err
	}
	defer stop()
	read, cancel := o.withTimeout(ctx)
	if f.watch {
		read, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	p := &eventPrinter{o: o, json: form == cli.FormatJSON}
	sel.CaughtUp = p.caughtUp
	if err := r.Read(read, sel, p.print); err != nil {
		return eventsProblem(err)
	}
	if !p.shown && !f.watch {
		p.caughtUp()
		if !p.shown {
			fmt.Fprintf(o.errOut, "No events for %s%s.\n", eventsWhere(sel), sinceText(f.since))
		}
	}
	return nil
}

// openEvents connects and returns a reader of the events stream, with
// what the credentials may read, in the CLI's JetStream domain.
func (o *options) openEvents(ctx context.Context) (*events.Reader, func(), error) {
	scope, err := o.credentialsScope()
	if err != nil {
		return nil, nil, err
	}
	conn, cfg, err := o.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	r, err := events.New(conn.NATS(), scope, cfg.JetStreamDomain)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return r, conn.Close, nil
}

// eventPrinter prints the stored events as one aligned table once they
// are all read, then each new one (a watch) as a row of its own.
type eventPrinter struct {
	o      *options
	json   bool
	stored []events.Event
	live   bool // the stored events are printed
	shown  bool // something was printed
}

func (p *eventPrinter) print(e events.Event) error {
	if p.json {
		p.shown = true
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.o.out, "%s\n", b)
		return err
	}
	if !p.live {
		p.stored = append(p.stored, e)
		return nil
	}
	p.shown = true
	return statusview.WriteEvents(p.o.out, p.o.style(), []events.Event{e}, p.o.now(), false)
}

func (p *eventPrinter) caughtUp() {
	if p.live {
		return
	}
	p.live = true
	if len(p.stored) > 0 {
		p.shown = true
		_ = statusview.WriteEvents(p.o.out, p.o.style(), p.stored, p.o.now(), true)
	}
	p.stored = nil
}

// eventsWhere names the namespace and component events were read for.
func eventsWhere(sel events.Selector) string {
	switch {
	case sel.Namespace == "":
		return "any namespace"
	case sel.Name == "":
		return fmt.Sprintf("namespace %q", sel.Namespace)
	}
	return fmt.Sprintf("component %s in namespace %q", sel.Name, sel.Namespace)
}

func sinceText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return " in the last " + d.String() + " (--since 0 shows every event kept)"
}

// eventsProblem says what a person can do about events that could not be
// read.
func eventsProblem(err error) error {
	if errors.Is(err, events.ErrNoStream) {
		return fmt.Errorf("%w: no controller that records events has run against this broker yet (tinyctl serve, install or dev of this version)", err)
	}
	return err
}
