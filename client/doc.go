// Package client is tinyctl's public Go client, what the CLI itself is
// built on: publish components to the spec bucket (optionally
// compare-and-set), read them, their history and their status in every
// cluster, roll back and delete, with the same semantics as `tinyctl
// apply`, `get`, `list`, `history`, `rollback`, `delete` and `status`.
// "Anything that can write to the bucket can publish" includes Go programs.
//
// Open a Client on a bus connection with New. The decisions behind the
// writes (whether a component is created, configured or unchanged, which
// revision a rollback restores, what each revision changed, what deleting a
// component removes) are pure functions over values read from the bucket.
package client
