// Package action names what a write did to one object: created,
// configured, unchanged, deleted, ... The same words are printed by the
// CLI, recorded by the controller and returned by the public client.
package action

// Action says what a tinyctl operation did, or would do, to one object: a
// Kubernetes object, a JetStream stream or consumer, a KV key or a Helm
// release. Every package reports with these words, so that the CLI, the
// logs, the metrics and -o json read the same everywhere.
type Action string

// Actions.
const (
	// Created: the object did not exist and was created.
	Created Action = "created"
	// Configured: the object existed and was changed.
	Configured Action = "configured"
	// Unchanged: the object already was as desired; nothing was written.
	Unchanged Action = "unchanged"
	// Recreated: the object was deleted and created again (a JetStream
	// consumer whose drift cannot be updated in place, only on request).
	Recreated Action = "recreated"
	// Upgraded: a Helm release got a new revision.
	Upgraded Action = "upgraded"
	// Deleted: the object was removed.
	Deleted Action = "deleted"
	// Absent: a delete found nothing to remove.
	Absent Action = "absent"
	// Retained: a delete left the object in place on purpose (a stream
	// under deletion.stream Retain).
	Retained Action = "retained"
	// Skipped: the object belongs to someone else and was left alone.
	Skipped Action = "skipped"
	// Failed: the write was refused or did not reach the server.
	Failed Action = "failed"
)

// Wrote reports whether the action involved a write.
func (a Action) Wrote() bool {
	switch a {
	case Created, Configured, Recreated, Upgraded, Deleted:
		return true
	}
	return false
}
