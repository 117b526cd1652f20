//go:build tools

// Package kube pins the kube-apiserver command so that `go mod tidy` keeps
// k8s.io/kubernetes and its dependencies in this module's go.sum.
package kube

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
