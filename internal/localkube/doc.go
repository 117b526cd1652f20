// Package localkube runs a real, local Kubernetes control plane — etcd and
// kube-apiserver as child processes on loopback — for tests and for
// `tinyctl dev`. The binaries come from the separate tools/kube module and are
// built once into a cache directory keyed by that module's sources.
//
// Child processes run in their own process group with a parent-death signal,
// so they die with the process that started them even when it is killed; a
// later Start also reaps control planes left behind by an earlier run that
// could not clean up.
package localkube
