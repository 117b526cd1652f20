// Package workload tells whether a component's workload runs the revision
// that was applied: Assess reads a Deployment's status and its pods' (the
// way kubectl rollout status and kstatus do, plus the pod-level reasons a
// user acts on), and Watcher keeps both in label-selected, trimmed
// informer caches and says when either changes.
//
// It reads; it never writes to Kubernetes.
package workload
