// Package reasons names the reasons a controller writes in status
// conditions (api.Condition.Reason): CamelCase words that readers may
// switch on. docs/status.md says when each is written.
package reasons

// Reasons of the Ready and Stalled conditions, and of Orphaned.
const (
	// Reconciled: every child is applied at the observed revision.
	Reconciled = "Reconciled"
	// Retrying: a transient failure, retried with backoff.
	Retrying = "Retrying"
	// InvalidSpec: the revision cannot be applied as written.
	InvalidSpec = "InvalidSpec"
	// InvalidOverride: the overrides that select this cluster conflict or
	// cross a limit here.
	InvalidOverride = "InvalidOverride"
	// Rejected: the API server refused a child for good.
	Rejected = "Rejected"
	// KindNotInstalled: a child's kind has no CRD in the cluster.
	KindNotInstalled = "KindNotInstalled"
	// KindForbidden: the controller may not list a child's optional kind.
	KindForbidden = "KindForbidden"
	// NamespaceMissing: the target namespace does not exist.
	NamespaceMissing = "NamespaceMissing"
	// NamespaceNotAllowed: the controller does not manage the namespace.
	NamespaceNotAllowed = "NamespaceNotAllowed"
	// PermissionDenied: the API server or NATS refused the controller.
	PermissionDenied = "PermissionDenied"
	// InsufficientStorage: the broker or the namespace's quota has no
	// room for the component's stream; re-checked every --recheck.
	InsufficientStorage = "InsufficientStorage"
	// ConsumerDrift: the durable consumer differs in a field that cannot
	// be changed in place.
	ConsumerDrift = "ConsumerDrift"
	// StreamRejected: JetStream refused the stream for good.
	StreamRejected = "StreamRejected"
	// Conflict: an object tinyctl did not create holds a child's name.
	Conflict = "Conflict"
	// SpecMissing: children exist without a value or a delete marker.
	SpecMissing = "SpecMissing"
	// UnplaceHeld: the placement no longer selects the cluster only
	// because the cluster's name or labels changed; children are kept.
	UnplaceHeld = "UnplaceHeld"
)
