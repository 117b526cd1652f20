package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/client/progress"
)

// defaultWaitTimeout bounds --wait and --wait-for unless --timeout says
// otherwise: long enough for a rollout of a few pods.
const defaultWaitTimeout = 5 * time.Minute

// Conditions --wait-for accepts, by their lower-case names.
var waitConditions = map[string]string{
	"ready":   api.ConditionReady,
	"applied": api.ConditionApplied,
}

// waitCondition returns the condition a --wait-for value names.
func waitCondition(v string) (string, error) {
	if c, ok := waitConditions[strings.ToLower(v)]; ok {
		return c, nil
	}
	return "", usageError{fmt.Errorf("--wait-for must be %s or %s, not %q", api.ConditionReady, api.ConditionApplied, v)}
}

// addWaitTimeoutFlag registers --timeout for a waiting command.
func addWaitTimeoutFlag(fs *pflag.FlagSet, target *time.Duration) {
	fs.DurationVar(target, "timeout", defaultWaitTimeout, "with --wait or --wait-for: how long to wait before giving up (exit 1, saying what each cluster reports)")
}

// await waits until every target reports condition cond True on every
// live cluster its placement selects, and prints one line per component
// and cluster. It fails, saying what each cluster still reports, when
// one reports what waiting cannot change (Stalled, a rollout past its
// deadline) or timeout passes.
func (o *options) await(ctx context.Context, c *client.Client, targets []progress.Target, cond string, timeout time.Duration) error {
	if len(targets) == 0 {
		return nil
	}
	fmt.Fprintf(o.errOut, "Waiting up to %s for %d component(s) to be %s on every cluster that places them...\n", timeout, len(targets), cond)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	opts := client.WatchOptions{ReadTimeout: o.nats.RequestTimeout, OnError: func(err error) { o.warn(err.Error()) }}
	got, err := c.Wait(ctx, targets, cond, opts)
	for _, p := range got {
		for _, cl := range p.Clusters {
			if cl.Met {
				fmt.Fprintf(o.out, "component/%s %s on cluster %s (revision %d)\n", p.Key, cond, cl.Cluster, cl.ObservedRevision)
			}
		}
	}
	var why []string
	for _, p := range got {
		if !p.Done {
			why = append(why, p.Summary())
		}
	}
	switch {
	case errors.Is(err, client.ErrWaitFailed):
		return fmt.Errorf("%s %w:\n%s", cond, client.ErrWaitFailed, strings.Join(why, "\n"))
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("timed out after %s waiting for %s:\n%s", timeout, cond, strings.Join(why, "\n"))
	}
	return err
}
