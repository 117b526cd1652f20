// Package serve runs tinyctl's controller process: it connects to NATS (or
// embeds a server), opens the spec and status buckets, campaigns for the
// cluster's lease, runs the reconcile loop while it holds it, keeps the
// cluster's heartbeat, and serves Prometheus metrics and health probes.
//
// Writes are fenced: every write the loop makes first checks that the lease
// is still valid by this process's clock, so a leader that was paused past
// its TTL (SIGSTOP, a long GC pause, a frozen VM) writes nothing after it
// resumes until it has won the lease again. See docs/leases.md.
package serve
