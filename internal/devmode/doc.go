// Package devmode runs all of tinyctl on one machine for trying it out: an
// embedded NATS server with JetStream, a local Kubernetes control plane
// (etcd and kube-apiserver from internal/localkube), the ScaledObject CRD,
// the controller (package serve), the example components, and a local
// worker process for each component that names one in its
// dev.tinyctl.io/run annotation, until the context ends; then it stops
// everything and leaves nothing running.
package devmode
