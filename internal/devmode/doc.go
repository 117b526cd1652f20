// Package devmode runs all of tinyctl on one machine for trying it out: an
// embedded NATS server with JetStream, a local Kubernetes control plane
// (etcd and kube-apiserver from internal/localkube), the ScaledObject CRD,
// the controller (package serve) and the example components, until the
// context ends; then it stops everything and leaves nothing running.
package devmode
