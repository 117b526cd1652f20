package main

import (
	"cmp"
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/statusview"
)

func newFleetCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Let a fleet hub gather the status of a cluster, or stop it",
		Long: `A fleet is one hub NATS holding the spec bucket and one NATS per cluster, a
leafnode of the hub with its own JetStream domain, whose controller runs with
--hub-domain and reads a local mirror of the hub's specs (docs/fleet.md).
Run these commands against the hub: join makes the hub's status and heartbeat
buckets copy the records of one cluster from its domain (only that cluster's
keys), leave stops the copying. The membership lives in the hub's bucket
configuration: no file to edit. tinyctl clusters lists the members.`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newFleetJoinCmd(o), newFleetLeaveCmd(o))
	return cmd
}

func newFleetJoinCmd(o *options) *cobra.Command {
	var domain, statusBucket string
	cmd := &cobra.Command{
		Use:   "join CLUSTER",
		Short: "Gather a cluster's status records and heartbeats at this hub",
		Long: `Join makes the hub's status and heartbeat buckets (created when missing) copy
the records of CLUSTER from the JetStream domain of its NATS (--domain, default
the cluster's name). The hub keeps copying across outages: what the cluster
wrote while cut off arrives when the link is back. Joining again changes
nothing; with another --domain it replaces the source.`,
		Example: `  tinyctl fleet join eu-1 --nats-url nats://hub:4222
  tinyctl fleet join us-1 --domain us-east-1`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := clusterArg(args[0], domain); err != nil {
				return err
			}
			ctx, cancel := o.withTimeout(cmd.Context())
			defer cancel()
			s, err := o.open(ctx, statusBucket, true)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.Join(ctx, args[0], domain); err != nil {
				return err
			}
			fmt.Fprintf(o.out, "cluster %s joined: the hub gathers its status from JetStream domain %s\n", args[0], cmp.Or(domain, args[0]))
			return nil
		},
	}
	cmd.Flags().StringVar(&domain, "domain", "", "JetStream domain of the cluster's NATS (default: the cluster's name)")
	addStatusBucketFlag(cmd.Flags(), &statusBucket)
	return cmd
}

func newFleetLeaveCmd(o *options) *cobra.Command {
	var statusBucket string
	cmd := &cobra.Command{
		Use:   "leave CLUSTER",
		Short: "Stop gathering a cluster's status at this hub",
		Long: `Leave stops the hub copying CLUSTER's status records and heartbeats. The
records already copied stay (tinyctl status shows them stale once the last
heartbeat expires). The cluster's controller keeps reconciling from its local
mirror of the specs; to stop it placing components, change their placement.`,
		Example: `  tinyctl fleet leave eu-1`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := clusterArg(args[0], ""); err != nil {
				return err
			}
			ctx, cancel := o.withTimeout(cmd.Context())
			defer cancel()
			s, err := o.open(ctx, statusBucket, false)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.Leave(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(o.out, "cluster %s left: the hub no longer gathers its status\n", args[0])
			return nil
		},
	}
	addStatusBucketFlag(cmd.Flags(), &statusBucket)
	return cmd
}

func newClustersCmd(o *options) *cobra.Command {
	var output, statusBucket string
	cmd := &cobra.Command{
		Use:   "clusters",
		Short: "List the clusters that report: labels, last heartbeat, components placed, ready, degraded and behind",
		Long: `Clusters prints one row per cluster known from a heartbeat, a status record or
the fleet membership: NAME LABELS HEARTBEAT PLACED READY DEGRADED BEHIND HUB.
HEARTBEAT is the age of the last heartbeat, "stale <age>" once it expired.
PLACED counts the components the cluster reports on, READY those whose pods run
their revision, DEGRADED those with a workload problem to act on (tinyctl status
says which), BEHIND those reported for an older revision than the latest
published. HUB, at a fleet hub,
shows the cluster's JetStream domain, how many of its status messages the hub
has yet to copy, and how long ago the hub last heard from it.
A cluster whose controller found another Kubernetes cluster using its name
(on the same NATS, or at the fleet hub) gets a warning after the table.
-o json and -o yaml print a ClusterList (see docs/cli.md).`,
		Example: `  tinyctl clusters
  tinyctl clusters -o json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return clustersRun(cmd.Context(), o, output, statusBucket) },
	}
	addOutputFlag(cmd, &output, "table", cli.FormatTable, cli.FormatYAML, cli.FormatJSON)
	addStatusBucketFlag(cmd.Flags(), &statusBucket)
	return cmd
}

func clustersRun(ctx context.Context, o *options, output, statusBucket string) error {
	form, err := format(output, cli.FormatTable, cli.FormatTable, cli.FormatYAML, cli.FormatJSON)
	if err != nil {
		return err
	}
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	s, err := o.open(ctx, statusBucket, false)
	if err != nil {
		return err
	}
	defer s.Close()
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return err
	}
	beats, err := s.Clusters(ctx)
	if err != nil {
		return err
	}
	members, err := s.Members(ctx)
	if err != nil {
		return err
	}
	rows := client.ClusterRows(snap, beats, members, snap.Now)
	switch form {
	case cli.FormatJSON, cli.FormatYAML:
		return writeStructured(o, form, statusview.NewClusterList(rows))
	}
	if len(rows) == 0 {
		fmt.Fprintln(o.errOut, "No cluster reports: no controller has written a heartbeat or a status record.")
		return nil
	}
	if err := statusview.WriteClusterTable(o.out, o.style(), rows, snap.Now); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Conflict != "" {
			o.warn("cluster " + r.Name + ": " + r.Conflict)
		}
	}
	return nil
}

// clusterArg refuses a cluster or domain name that is not one NATS subject
// token, before connecting.
func clusterArg(cluster, domain string) error {
	for what, v := range map[string]string{"cluster name": cluster, "--domain": domain} {
		if !bus.IsToken(v) && (what == "cluster name" || v != "") {
			return usageError{fmt.Errorf("%s %q: want one NATS subject token (letters, digits, - and _), as given to tinyctl serve --cluster-name", what, v)}
		}
	}
	return nil
}
