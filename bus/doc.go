// Package bus is the connection to NATS that every part of tinyctl's NATS
// layer is opened on, and the errors that layer returns.
//
//   - Connect opens a client from a Config (token, user/password, nkey,
//     creds/JWT, TLS and mutual TLS) that reconnects forever with backoff and
//     jitter and reports its state changes.
//   - StartEmbedded runs a nats-server with JetStream inside the process for
//     dev mode and single-binary deployments.
//   - Conn.Guarded turns the server's asynchronous permission violations into
//     errors of the operations that caused them.
//
// The jobs built on a connection live in sub-packages, one each: kv (a KV
// bucket and its resumable watch), specs (the spec bucket), status (status
// records and heartbeats), lease (leader election and the write fence) and
// streams (work-queue streams and durable consumers).
//
// Errors are classified once, here: ErrNotFound, *RevisionMismatchError,
// ErrPermissionDenied, ErrAuthentication and IsTransient work with
// errors.Is/As through any wrapping.
package bus
