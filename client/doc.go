// Package client is tinyctl's public Go client, what the CLI itself is
// built on: publish components to the spec bucket (optionally
// compare-and-set), read them, their history and their status in every
// cluster, roll back and delete, with the same semantics as `tinyctl
// apply`, `get`, `list`, `history`, `rollback`, `delete` and `status`.
// "Anything that can write to the bucket can publish" includes Go programs.
//
// Open a Client on your own NATS connection (nats.go's *nats.Conn, with
// whatever credentials the program has) with New; the client never closes
// it. Config names the buckets, and with Namespace scopes a namespace
// publisher's credentials.
//
// What it reads comes back typed: a component's revisions as Revision (the
// decoded api.Component, or the marker a delete left), each cluster's
// status as StatusRecord (api.Status and the cluster's Heartbeat, judged
// stale or live on the NATS server's clock), fleet membership as Member.
// Snapshot reads both buckets at once, and Rows, Orphans, ClusterRows and
// WithoutKEDA are pure views of a Snapshot, as the CLI's tables show them.
// WatchStatus and Wait follow the buckets as they change (what `status -w`
// and `apply --wait` do).
//
// The decisions behind the writes (whether a component is created,
// configured or unchanged, which revision a rollback restores, what each
// revision changed, what deleting a component removes) are pure functions
// over values read from the bucket. The Example runs the whole cycle
// against a NATS server of its own.
package client
