package api

import "strings"

// Environment variables tinyctl sets on every worker container. A component
// may not set them itself (Validate reports it), and render uses these names.
const (
	// EnvNATSURL is the NATS server URL the worker connects to.
	EnvNATSURL = "NATS_URL"
	// EnvNATSCreds is the path of the mounted NATS credentials file.
	EnvNATSCreds = "NATS_CREDS"
	// EnvStream is the name of the component's JetStream stream.
	EnvStream = "TINYCTL_STREAM"
	// EnvConsumer is the name of the durable consumer the worker binds.
	EnvConsumer = "TINYCTL_CONSUMER"
	// EnvReservedPrefix is reserved for variables tinyctl may add later:
	// a component may not set any name that starts with it.
	EnvReservedPrefix = "TINYCTL_"
)

// IsReservedEnv reports whether name is set by tinyctl itself and so may not
// appear in spec.env.
func IsReservedEnv(name string) bool {
	return name == EnvNATSURL || name == EnvNATSCreds || strings.HasPrefix(name, EnvReservedPrefix)
}
