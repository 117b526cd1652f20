// Package kv is tinyctl's JetStream key-value bucket: Open binds one (or
// a local mirror of a fleet hub's) with settings checked against what
// exists (a *BucketConfigError names every difference), reads (latest
// revision, from the stream's leader when it matters, history, listings),
// revision-checked writes with per-message TTLs, and a Watcher that
// delivers every key's latest entry, an "initial values done" marker and
// then every change, resuming after the last revision across reconnects.
// Credentials scoped to one namespace reach a bucket through their
// account's imports; the same calls then stay within that namespace.
package kv
