// Package jscluster holds the end-to-end test of tinyctl on a 3-node
// JetStream cluster: three nats-server processes (package natscluster),
// two `tinyctl serve` processes with --replicas 3 against a real
// kube-apiserver, and a schedule that SIGKILLs and restarts one node after
// another while components are put and deleted and jobs are published.
package jscluster
