// Package workerenv is the contract between the Deployment tinyctl renders
// and the worker it runs: the environment variables that tell a worker
// where NATS is, which credentials to use and which consumer to bind. It
// has no dependencies, so a worker imports it without tinyctl's own.
package workerenv

import "strings"

// Environment variables tinyctl sets on every worker container. A component
// may not set them itself (Validate reports it), and render uses these names.
const (
	// NATSURL is the NATS server URL the worker connects to.
	NATSURL = "NATS_URL"
	// NATSCreds is the path of the mounted NATS credentials file.
	NATSCreds = "NATS_CREDS"
	// Stream is the name of the component's JetStream stream.
	Stream = "TINYCTL_STREAM"
	// Consumer is the name of the durable consumer the worker binds.
	Consumer = "TINYCTL_CONSUMER"
	// ReservedPrefix is reserved for variables tinyctl may add later:
	// a component may not set any name that starts with it.
	ReservedPrefix = "TINYCTL_"
)

// Reserved reports whether name is set by tinyctl itself and so may not
// appear in spec.env.
func Reserved(name string) bool {
	return name == NATSURL || name == NATSCreds || strings.HasPrefix(name, ReservedPrefix)
}
