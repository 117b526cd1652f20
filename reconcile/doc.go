// Package reconcile is tinyctl's control loop. It watches the spec bucket,
// keeps a local cache of the latest entry per key, and feeds keys into a
// client-go rate-limited workqueue (a burst of puts to one key coalesces).
// A bounded pool of workers takes one key at a time through the same chain:
// decode → default → validate → render → ensure stream and consumer → apply
// Deployment and NetworkPolicy → apply ScaledObject → prune → write status.
//
// Deletes happen only on an explicit KV delete or purge marker. A child whose
// component key is merely absent is reported as an orphan, never removed.
// Before writing, a worker re-reads the key's latest revision so that a
// delete that landed mid-reconcile wins (no resurrection).
//
// Errors are classified once (see Class): transient errors retry with capped
// exponential backoff, permanent ones stall the component until a new
// revision, waiting ones (a CRD that is not installed yet) apply the rest and
// check again later.
package reconcile
