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
	// ServiceAccountNotAllowed: the component names a ServiceAccount in a
	// namespace whose components the operator does not let run as one.
	ServiceAccountNotAllowed = "ServiceAccountNotAllowed"
	// Fenced: a child was written by a newer controller tenure (another
	// controller took the lease over): this one writes it no more.
	Fenced = "Fenced"
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
	// RevisionBehind: the spec bucket's latest revision is older than one
	// this cluster already applied from the same bucket (a mirror still
	// copying; a bucket restored, or that lost writes); nothing is applied
	// or deleted until a newer revision arrives.
	RevisionBehind = "RevisionBehind"
	// Suspended: spec.suspend (or an override for this cluster) stops
	// reconciling; the children are left as they are.
	Suspended = "Suspended"
)

// Reasons of the Ready and Degraded conditions that describe the workload
// (the Deployment and its pods) once every child is applied. Reasons the
// kubelet gives a container that cannot start and that no constant names
// here (CreateContainerConfigError, say) are passed through as it wrote
// them.
const (
	// Available: every replica runs the applied revision and is available.
	Available = "Available"
	// ScaledToZero: the workload runs no replica, as asked (replicas 0, or
	// KEDA scaled it to zero on an empty queue).
	ScaledToZero = "ScaledToZero"
	// Progressing: the rollout of the applied revision is under way.
	Progressing = "Progressing"
	// ImagePullBackOff: a pod cannot pull its image.
	ImagePullBackOff = "ImagePullBackOff"
	// CrashLoopBackOff: a container keeps exiting and is restarted with
	// back-off.
	CrashLoopBackOff = "CrashLoopBackOff"
	// Unschedulable: the scheduler finds no node for a pod.
	Unschedulable = "Unschedulable"
	// FailedCreate: the API server refuses the Deployment's pods (a quota,
	// Pod Security, an admission webhook).
	FailedCreate = "FailedCreate"
	// ProgressDeadlineExceeded: the rollout made no progress within the
	// Deployment's progress deadline.
	ProgressDeadlineExceeded = "ProgressDeadlineExceeded"
)
