//go:build tools

// Package kube pins the commands built from k8s.io/kubernetes — the API
// server for every test, and the node's kubelet, controller manager,
// scheduler and proxy for the real-node tests — so that `go mod tidy` keeps
// k8s.io/kubernetes and their dependencies in this module's go.sum.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
