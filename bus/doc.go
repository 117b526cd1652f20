// Package bus is tinyctl's NATS layer: everything the control plane keeps
// or exchanges on NATS goes through it.
//
//   - Connect opens a client from a Config (token, user/password, nkey,
//     creds/JWT, TLS and mutual TLS) that reconnects forever with backoff and
//     jitter and reports its state changes.
//   - StartEmbedded runs a nats-server with JetStream inside the process for
//     dev mode and single-binary deployments.
//   - SpecStore keeps component specs in a JetStream KV bucket as raw bytes,
//     with revision-checked writes, history, rollback and a resumable Watch.
//   - StatusStore keeps per-cluster status records and per-cluster
//     heartbeats, so readers can tell a live status from a stale one.
//   - LeaseStore hands out TTL leases for leader election.
//   - StreamManager ensures the JetStream stream and durable consumer of a
//     component without ever losing a consumer's position.
//
// Errors are classified once, here: ErrNotFound, *RevisionMismatchError,
// ErrPermissionDenied, ErrAuthentication and IsTransient work with
// errors.Is/As through any wrapping.
package bus
