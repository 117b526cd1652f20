package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/client/queues"
	"github.com/tinyctl/tinyctl/internal/cli"
)

func newJobsCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List and replay a component's dead jobs (spec.jobs.deadLetter)",
		Long: `A job its worker never finished — it failed, or timed out, on every one of
spec.jobs.consumer.maxDeliver deliveries — is moved by the controller out of
the component's work queue into its dead-letter stream when the component
sets spec.jobs.deadLetter: true, so it no longer takes room in the queue.
There it is kept for a week (at most 10,000, the oldest dropped first).

These commands ask the controller of the cluster whose broker they reach: a
fleet hub holds no member's jobs (point --nats-url at the member's broker).`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newJobsDeadCmd(o), newJobsReplayCmd(o))
	return cmd
}

func newJobsDeadCmd(o *options) *cobra.Command {
	var output string
	var req deadletter.ListRequest
	cmd := &cobra.Command{
		Use:   "dead NAME",
		Short: "List the jobs of a component that used up their deliveries",
		Long: `Dead lists a component's dead jobs, oldest first: the sequence that
"tinyctl jobs replay --seq" names, the subject the job was sent to, how often
it was delivered, when it was sent and when it was given up, and its data (the
first 60 characters; -o json or -o yaml show all of it, base64-encoded, with
its headers).`,
		Example: `  tinyctl jobs dead thumbnailer -n media
  tinyctl jobs dead thumbnailer -n media --after 120 --limit 100 -o json`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			return jobsDeadRun(cmd.Context(), o, args[0], output, req)
		},
	}
	addOutputFlag(cmd, &output, "text", cli.FormatText, cli.FormatYAML, cli.FormatJSON, cli.FormatJSONPath)
	cmd.Flags().Uint64Var(&req.After, "after", 0, "list from the dead job after this sequence (paging)")
	cmd.Flags().IntVar(&req.Limit, "limit", 20, fmt.Sprintf("list at most this many (at most %d)", 100))
	return cmd
}

func newJobsReplayCmd(o *options) *cobra.Command {
	var all bool
	var seqs []uint
	cmd := &cobra.Command{
		Use:   "replay NAME (--all | --seq N[,N...])",
		Short: "Put dead jobs back on a component's queue",
		Long: `Replay asks the controller to publish dead jobs again to the component's
work queue, with their original subject, data and headers, and to remove them
from the dead-letter stream; the worker then gets each as a new job, with a
fresh count of deliveries. Fix what made them fail first. A full queue
(stream.maxMsgs or maxBytes) refuses the rest; those stay dead.`,
		Example: `  tinyctl jobs replay thumbnailer -n media --seq 3
  tinyctl jobs replay thumbnailer -n media --all`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: o.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(seqs) > 0) {
				return usageError{fmt.Errorf("name the dead jobs to replay: --all, or --seq with their sequences (tinyctl jobs dead %s)", args[0])}
			}
			req := deadletter.ReplayRequest{All: all}
			for _, s := range seqs {
				req.Sequences = append(req.Sequences, uint64(s))
			}
			return jobsReplayRun(cmd.Context(), o, args[0], req)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "replay every dead job")
	cmd.Flags().UintSliceVar(&seqs, "seq", nil, "replay the dead jobs with these sequences (comma-separated, or repeated)")
	return cmd
}

// deadLetters opens a session and its queue reader for component name.
func deadLetters(ctx context.Context, o *options, name string, fn func(ctx context.Context, r *queues.Reader) error) error {
	return o.withComponent(ctx, name, func(ctx context.Context, _ string, s *session) error {
		r, err := queues.New(s.conn.NATS(), s.Namespace())
		if err != nil {
			return err
		}
		return fn(ctx, r)
	})
}

func jobsDeadRun(ctx context.Context, o *options, name, output string, req deadletter.ListRequest) error {
	form, err := format(output, cli.FormatText, cli.FormatText, cli.FormatYAML, cli.FormatJSON, cli.FormatJSONPath)
	if err != nil {
		return err
	}
	if req.Limit < 1 || req.Limit > 100 {
		return usageError{fmt.Errorf("--limit %d: must be between 1 and 100", req.Limit)}
	}
	return deadLetters(ctx, o, name, func(ctx context.Context, r *queues.Reader) error {
		out, err := r.Dead(ctx, o.namespace, name, req)
		if err != nil {
			return err
		}
		if form != cli.FormatText {
			return cli.WriteData(o.out, form, out)
		}
		if len(out.Jobs) == 0 {
			fmt.Fprintf(o.out, "no dead jobs of %s/%s (%d in all)\n", o.namespace, name, out.Total)
			return nil
		}
		t := cli.NewTable(o.out, "SEQ", "SUBJECT", "DELIVERIES", "SENT", "DIED", "DATA")
		now := o.now()
		for _, j := range out.Jobs {
			t.Row(strconv.FormatUint(j.Sequence, 10), j.Subject, strconv.Itoa(j.Deliveries),
				cli.Age(j.Published, now), cli.Age(j.Died, now), dataPreview(j.Data))
		}
		if err := t.Flush(); err != nil {
			return err
		}
		if last := out.Jobs[len(out.Jobs)-1].Sequence; uint64(len(out.Jobs)) < out.Total {
			fmt.Fprintf(o.out, "%d of %d dead jobs; the next: --after %d\n", len(out.Jobs), out.Total, last)
		}
		return nil
	})
}

func jobsReplayRun(ctx context.Context, o *options, name string, req deadletter.ReplayRequest) error {
	return deadLetters(ctx, o, name, func(ctx context.Context, r *queues.Reader) error {
		out, err := r.Replay(ctx, o.namespace, name, req)
		fmt.Fprintf(o.out, "%d dead jobs of %s/%s replayed\n", out.Replayed, o.namespace, name)
		if len(out.Missing) > 0 {
			missing := make([]string, len(out.Missing))
			for i, s := range out.Missing {
				missing[i] = strconv.FormatUint(s, 10)
			}
			return fmt.Errorf("no dead job with sequence %s (tinyctl jobs dead %s lists them)", strings.Join(missing, ", "), name)
		}
		return err
	})
}

// dataPreview is the start of a job's data as one printable line.
func dataPreview(data []byte) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '.'
	}, string(data))
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}
