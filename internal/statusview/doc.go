// Package statusview turns what the spec, status and heartbeat buckets hold
// into what `tinyctl status` and `tinyctl orphans` show: one row per
// component per cluster (observed against latest revision, Ready or
// Stalled with its reason, stale clusters marked), the orphans the
// controllers report, their aligned tables and their machine-readable
// lists (-o json|yaml, documented in docs/cli.md); and `tinyctl
// describe`'s one component: spec, status rows, queue and children.
//
// client.Rows and Orphans are pure functions over a client.Snapshot. Source reads
// snapshots from NATS and Watch re-reads one on every change of the
// buckets (and when a heartbeat expires by the clock), handing each
// changed view to the caller.
package statusview
