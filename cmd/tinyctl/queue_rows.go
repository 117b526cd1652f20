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

// askClusters asks each of clusters' controllers for component
// namespace/name's queue there, in order. A cluster in silent (it did not
// answer before) is not asked again, and one that does not answer now is
// added: each ask may wait its timeout.
func askClusters(ctx context.Context, r *queues.Reader, namespace, name string, clusters []string, silent map[string]error) []statusview.QueueReading {
	out := make([]statusview.QueueReading, len(clusters))
	for i, c := range clusters {
		if err, ok := silent[c]; ok {
			out[i].Err = err // one warning for the cluster
			continue
		}
		out[i].Queue, out[i].Err = r.OnCluster(ctx, c, namespace, name)
		if errors.Is(out[i].Err, queues.ErrNoAnswer) {
			silent[c] = out[i].Err
		}
	}
	return out
}

// readRowQueues reads the queue of each row on its cluster: on the broker
// reached, or asked of the row's cluster's controller (perCluster). rows
// are sorted by key, so each component's rows are read together, its
// local queue once.
func readRowQueues(ctx context.Context, r *queues.Reader, rows []client.Row) []statusview.QueueReading {
	out := make([]statusview.QueueReading, 0, len(rows))
	silent := map[string]error{}
	for len(rows) > 0 {
		n := 1
		for n < len(rows) && rows[n].Key == rows[0].Key {
			n++
		}
		same, first := rows[:n], rows[0]
		rows = rows[n:]
		clusters := reportingClusters(same)
		var local statusview.QueueReading
		var asked []statusview.QueueReading
		if len(clusters) > 0 {
			local.Queue, local.Err = r.Read(ctx, first.Namespace(), first.Name())
			if perCluster(local.Err, clusters) {
				asked = askClusters(ctx, r, first.Namespace(), first.Name(), clusters, silent)
			}
		}
		for _, row := range same {
			switch i := slices.Index(clusters, row.Cluster()); {
			case i < 0: // no cluster has reported: the row says so
				out = append(out, statusview.QueueReading{None: true})
			case asked != nil:
				out = append(out, asked[i])
			default:
				out = append(out, local)
			}
		}
	}
	return out
}
