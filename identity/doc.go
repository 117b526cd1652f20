// Package identity mints the NATS identities of tinyctl's parties under
// decentralized auth (operator → account → users), with the NATS
// project's own jwt and nkeys libraries, and says what each party may do:
//
//   - a worker: fetch, ack and read its own component's consumer, receive
//     on its own inbox, publish the subjects its component declares;
//   - a publisher: write the spec bucket and read the spec, status and
//     heartbeat buckets, nothing else;
//   - the controller: manage streams, consumers and its buckets, but not
//     write specs.
//
// The controller holds only an account signing key (a Signer) and mints
// short-lived worker credentials locally, without a round trip to the
// server; `tinyctl install` holds the operator and account keys (Keys)
// and mints the rest. Permissions are allow lists: anything not listed is
// refused by the server. docs/security.md has the table.
package identity
