// Package apply is tinyctl's single path for Kubernetes writes: every
// create, apply, delete, dry run, diff and wait of the project goes
// through a Manager, one file per verb.
//
//   - Apply: server-side apply through the dynamic client with field
//     manager "tinyctl" and force, skipped when the live object already
//     carries the desired content hash and no other manager has touched it;
//     with Owned, an object tinyctl did not create is never taken over.
//   - ApplyAll: a set in order, returning a ChangeSet.
//   - Create: create-if-absent, for objects tinyctl must not take over.
//   - Delete: background deletion; with Owned, only of objects that carry
//     the owner's label (checked and deleted by UID).
//   - DryRun, Get and Diff: what the API server would store, as a
//     unified YAML diff against the live object.
//   - WaitFor, WaitEstablished, WaitGone: polls with a deadline.
//
// A discovery-backed REST mapper refreshes when a kind is unknown, so a CRD
// installed later is picked up (ErrKindNotInstalled until then). Every
// verb returns a Result saying what happened (the action.Action words),
// which callers log and report. Every write checks its context's deadline
// by the wall clock right before it is sent, so a fenced write of a
// process paused past its lease is not sent late.
package apply
