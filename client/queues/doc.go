// Package queues reads a component's work queue as `tinyctl describe`
// shows it: the jobs its stream holds and the oldest one's age, and its
// worker consumer's pending, ack-pending and redelivered counts. It asks
// the broker a connection reaches, through the imports the credentials'
// NATS account has of the namespace's jobs account (docs/security.md), or
// the JetStream API itself in one account; it changes nothing. Dead and
// Replay ask the controller for a component's dead letters (list them,
// put them back on the queue): the one write, and the controller makes it.
package queues
