// Package localnode runs a real Kubernetes node on this machine, around a
// localkube control plane, so that tests see pods run: containerd (the
// Debian package) runs containers with runc and the bridge CNI plugin;
// kubelet registers the node; kube-controller-manager and kube-scheduler
// turn Deployments and StatefulSets into scheduled pods; kube-proxy gives
// Services their ClusterIPs; and a small DNS server answers
// *.svc.cluster.local from the API server's Services and EndpointSlices.
// There is no registry: images are imported from tarballs built here
// (package ociimage), and pods pull nothing.
//
// A node changes the machine: sysctls, iptables rules, a bridge, network
// namespaces, mounts and cgroups. Start records what it is about to change
// in its state directory and Stop puts it back; a Start after a run that
// died without stopping undoes that run first. Only one node can run per
// machine (kubelet's ports, the bridge and the kubepods cgroups are
// machine-wide), so Start takes a machine-wide lock that Stop releases:
// test packages that need a node wait for each other. It needs root and
// the packages `go tool task tools-node` installs; without them Start fails
// and says what is missing.
//
// The bridge plugin does not enforce NetworkPolicy: a node here runs pods
// and routes Services, it is not a test of egress rules.
package localnode
