// Package chaos drives the real controller (`tinyctl serve` as a process)
// through faults and checks what must hold whatever happens: every key
// converges to its last acknowledged revision, nothing deleted comes back,
// nothing managed exists without a key (except reported orphans), applied
// revisions never go backwards, consumers are never re-created, and every
// object keeps its security posture.
//
// The pieces are a nats-server run as a separate process that can be
// SIGKILLed (NATSServer), a random writer that remembers what the bucket
// acknowledged (Driver), a watch that records every revision a Deployment
// carried (History), an HTTP proxy in front of the API server that fails a
// share of the writes (FaultyAPI), and the checks over the end state
// (Check). The scenarios, one per fault, are the package's tests;
// TestChaosFleet runs a hub and three member clusters through the fleet's
// faults. See docs/reliability.md.
package chaos
