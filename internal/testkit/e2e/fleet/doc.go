// Package fleet holds the end-to-end test of fleet sync: a hub NATS, two
// cluster NATS servers as its leafnodes (each behind a proxy that can cut
// the link), two real kube-apiservers, and a `tinyctl serve` process per
// cluster, driven with the tinyctl binary as a user would.
package fleet
