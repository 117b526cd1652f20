// Package workerenv is the contract between the Deployment tinyctl renders
// and the worker it runs: the environment variables that tell a worker
// where NATS is, which credentials and TLS files to use, which consumer to
// bind and where to send telemetry. It has no dependencies, so a worker
// imports it without tinyctl's own.
package workerenv

import (
	"slices"
	"strings"
)

// Environment variables tinyctl sets on worker containers. A component may
// not set them itself (validation reports it), and render uses these names.
const (
	// NATSURL is the NATS server URL the worker connects to.
	NATSURL = "NATS_URL"
	// NATSCreds is the path of the mounted NATS credentials file (a user
	// JWT and its seed), when the cluster mounts credentials. The file is
	// replaced before it expires: read it again on every reconnect.
	NATSCreds = "NATS_CREDS"
	// NATSCA, NATSCert and NATSKey are the paths of the CA that signs the
	// broker's certificate and of a client certificate and key for mutual
	// TLS, when the broker speaks TLS.
	NATSCA   = "NATS_CA"
	NATSCert = "NATS_CERT"
	NATSKey  = "NATS_KEY"
	// Stream is the name of the component's JetStream stream.
	Stream = "TINYCTL_STREAM"
	// Consumer is the name of the durable consumer the worker binds.
	Consumer = "TINYCTL_CONSUMER"
	// InboxPrefix is the inbox prefix the worker's client must use
	// (nats.CustomInboxPrefix) when it has credentials of its own: they
	// let it receive replies only there.
	InboxPrefix = "TINYCTL_INBOX_PREFIX"
	// JSAPIPrefix, when set, is the JetStream API prefix the worker's
	// client must use (jetstream.NewWithAPIPrefix, or the prefix option of
	// any NATS client): the worker's account has no JetStream of its own
	// and sees its consumer's API there.
	JSAPIPrefix = "TINYCTL_JS_API_PREFIX"
	// DrainGrace is how long the worker may spend draining running jobs
	// when its pod stops (a Go duration such as "55s"): set when the
	// component sets terminationGracePeriodSeconds, 5 seconds under it.
	DrainGrace = "TINYCTL_DRAIN_GRACE"
	// HealthAddr is where the worker serves /healthz and /readyz, which
	// the kubelet probes (":8081"): set when the component asks for the
	// worker library's probes (spec.probes.worker).
	HealthAddr = "TINYCTL_HEALTH_ADDR"
	// MetricsAddr is where the worker serves Prometheus metrics at
	// /metrics (":9464"): set when the component has spec.metricsPortPort.
	MetricsAddr = "TINYCTL_METRICS_ADDR"
	// OTLPEndpoint is the OpenTelemetry collector to export traces to.
	OTLPEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"
	// ServiceName names the worker in its traces: the component's name.
	ServiceName = "OTEL_SERVICE_NAME"
	// ReservedPrefix is reserved for variables tinyctl may add later:
	// a component may not set any name that starts with it.
	ReservedPrefix = "TINYCTL_"
)

// reserved are the names outside ReservedPrefix that tinyctl sets.
var reserved = []string{NATSURL, NATSCreds, NATSCA, NATSCert, NATSKey, OTLPEndpoint, ServiceName}

// Reserved reports whether name is set by tinyctl itself and so may not
// appear in spec.env.
func Reserved(name string) bool {
	return slices.Contains(reserved, name) || strings.HasPrefix(name, ReservedPrefix)
}

// ReservedNames lists the names Reserved refuses besides the
// ReservedPrefix ones.
func ReservedNames() []string { return slices.Clone(reserved) }
