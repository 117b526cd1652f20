package client

import "github.com/tinyctl/tinyctl/api/cluster"

// WithoutKEDA returns the rows, of those given, whose component asks to be
// scaled (spec.scaling) in a cluster whose controller reports, in a live
// heartbeat, that no KEDA operator runs there: the component's
// ScaledObject exists but nothing acts on it, so its replica count never
// moves. Rows without a status, from stale clusters, or whose controller
// could not tell are left out.
func WithoutKEDA(snap Snapshot, rows []Row) []Row {
	scaled := map[string]bool{}
	for _, e := range snap.Components {
		if e.Err == nil && e.Component.Spec.Scaling != nil {
			scaled[e.Key] = true
		}
	}
	var out []Row
	for _, r := range rows {
		st := r.Status
		if scaled[r.Key] && st != nil && !st.Stale && st.Heartbeat != nil && st.Heartbeat.KEDA == cluster.KEDAAbsent {
			out = append(out, r)
		}
	}
	return out
}
