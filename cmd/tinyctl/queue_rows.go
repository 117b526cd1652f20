package main

import (
	"context"
	"errors"
	"slices"

	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/client/queues"
	"github.com/tinyctl/tinyctl/internal/statusview"
)

// perCluster says whether a component's queues are to be asked of each
// reporting cluster's controller rather than read on the broker reached:
// when that broker holds none (a fleet hub), or more than one cluster
// reports on it (a hub that also runs components: its own stream is one
// cluster's queue, not every cluster's).
func perCluster(local error, clusters []string) bool {
	return errors.Is(local, queues.ErrNotFound) || len(clusters) > 1
}

// reportingClusters are the clusters of rows that hold a status record,
// each once, in order.
func reportingClusters(rows []client.Row) []string {
	var out []string
	for _, row := range rows {
		if c := row.Cluster(); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// readRowQueues reads the queue of each row on its cluster: on the broker
// reached, or asked of the row's cluster's controller (perCluster). A
// component's local queue is read once, and a cluster that did not answer
// is not asked again (each ask may wait its timeout).
func readRowQueues(ctx context.Context, r *queues.Reader, rows []client.Row) []statusview.QueueReading {
	byKey := map[string][]string{}
	for _, row := range rows {
		if c := row.Cluster(); c != "" && !slices.Contains(byKey[row.Key], c) {
			byKey[row.Key] = append(byKey[row.Key], c)
		}
	}
	local := map[string]statusview.QueueReading{}
	silent := map[string]error{}
	out := make([]statusview.QueueReading, len(rows))
	for i, row := range rows {
		if row.Cluster() == "" {
			out[i].None = true // no cluster has reported: the row says so
			continue
		}
		l, ok := local[row.Key]
		if !ok {
			l.Queue, l.Err = r.Read(ctx, row.Namespace(), row.Name())
			local[row.Key] = l
		}
		if !perCluster(l.Err, byKey[row.Key]) {
			out[i] = l
			continue
		}
		if err, ok := silent[row.Cluster()]; ok {
			out[i].Err = err
			continue
		}
		out[i].Queue, out[i].Err = r.OnCluster(ctx, row.Cluster(), row.Namespace(), row.Name())
		if errors.Is(out[i].Err, queues.ErrNoAnswer) {
			silent[row.Cluster()] = out[i].Err // one warning for the cluster
		}
	}
	return out
}
