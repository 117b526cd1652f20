// Package render turns a Component into everything its worker needs in one
// cluster: a hardened Deployment, a NetworkPolicy for its egress posture, a
// KEDA ScaledObject when the component scales on queue depth, and the
// JetStream work-queue stream and durable consumer that carry its jobs.
//
// Render is pure. It reads no clock, environment or network, and the same
// component, revision and Cluster always give byte-identical objects. The
// component must already be defaulted (api.Default) and valid
// (api.Validate); Render still returns an error rather than an object the
// API server or nats-server would refuse.
//
// Every Kubernetes child carries the labels and annotations named by the
// constants in this package: the reconciler selects children by
// LabelManagedBy and LabelComponent, and skips an apply when the live
// object's AnnotationContentHash equals the desired one. The hash covers
// the object's content but not the revision, so a new revision whose
// rendered content is unchanged is not re-applied.
package render
