package cluster

// Settings are what rendering needs to know about the cluster a component
// runs in: where its NATS broker is, how KEDA reaches it, and how workers
// run. A controller renders with them and publishes them in its
// Heartbeat, so that `tinyctl render` and `diff` show what that cluster
// would apply. The zero value of any field means its default (package
// render, Cluster.WithDefaults, gives them and checks them).
//
// The JSON names are the wire format of the heartbeat's settings. They
// differ from the Go names only in case, which is how heartbeats written
// before the names were set (Go's default encoding) still decode, and how
// readers of that time still decode these.
type Settings struct {
	// Name identifies this cluster in a fleet. It is recorded on every
	// child in the tinyctl.io/cluster annotation.
	Name string `json:"name"`
	// NATS locates the broker workers connect to.
	NATS NATS `json:"nats"`
	// DNS selects the cluster DNS pods workers may query.
	DNS DNS `json:"dns"`
	// Collector is the OpenTelemetry collector workers export traces to.
	Collector Collector `json:"collector"`
	// Network are the cluster's own address ranges: `internet` egress
	// excludes them, as it excludes the link-local metadata addresses.
	Network Network `json:"network"`
	// RunAsUser is the uid, gid and fsGroup of worker pods. It must not be 0.
	RunAsUser int64 `json:"runAsUser"`
	// Streams caps every component's stream (see StreamLimits).
	Streams StreamLimits `json:"streams"`
	// MonitoringNamespaces are the namespaces whose pods (Prometheus) may
	// scrape a worker's spec.metricsPort.
	MonitoringNamespaces []string `json:"monitoringNamespaces,omitempty"`
}

// Collector says where workers send telemetry: every egress posture allows
// it, the way it allows NATS and DNS.
type Collector struct {
	// Endpoint is given to workers as OTEL_EXPORTER_OTLP_ENDPOINT; "-"
	// means no collector (nothing is given or allowed).
	Endpoint string `json:"endpoint"`
	// Namespace and PodLabels select the collector's pods; Ports are its
	// OTLP ports (gRPC and HTTP).
	Namespace string            `json:"namespace"`
	PodLabels map[string]string `json:"podLabels"`
	Ports     []int32           `json:"ports"`
}

// Network holds the cluster's pod and service address ranges (CIDRs).
type Network struct {
	PodCIDRs     []string `json:"podCIDRs"`
	ServiceCIDRs []string `json:"serviceCIDRs"`
}

// NATS says where workers and KEDA find the NATS broker.
type NATS struct {
	// URL is given to workers in the NATS_URL environment variable.
	URL string `json:"url"`
	// Namespace and PodLabels select the broker's pods for the egress
	// NetworkPolicy; ClientPort is the TCP port workers connect to.
	Namespace  string            `json:"namespace"`
	PodLabels  map[string]string `json:"podLabels"`
	ClientPort int32             `json:"clientPort"`
	// MonitoringEndpoint is the broker's HTTP monitoring host:port, given to
	// KEDA's nats-jetstream trigger as natsServerMonitoringEndpoint.
	MonitoringEndpoint string `json:"monitoringEndpoint"`
	// Account is the NATS account that holds the streams, as KEDA names it.
	Account string `json:"account"`
	// Accounts, when namespaces have NATS accounts of their own, is the
	// account holding each namespace's streams; a namespace not listed
	// uses Account.
	Accounts map[string]string `json:"accounts"`
	// JSAPIPrefix, when set, is the JetStream API prefix workers use
	// (TINYCTL_JS_API_PREFIX): their account imports their stream's API
	// under it instead of having JetStream of its own.
	JSAPIPrefix string `json:"jsAPIPrefix"`
	// CredentialsSecret names a Secret in the component's namespace holding
	// the worker's NATS credentials, mounted read-only into the worker:
	// empty mounts none; "*" (render.PerComponent) mounts the component's
	// own Secret, which the controller mints; any other name is one Secret
	// every component shares.
	CredentialsSecret string `json:"credentialsSecret"`
	// CredentialsKey is the key of that Secret holding the credentials
	// file; the worker finds it under the NATS_CREDS environment variable.
	CredentialsKey string `json:"credentialsKey"`
	// WorkerTLS says which TLS files the credentials Secret also holds:
	// the CA of the broker's certificate, and a client certificate for
	// mutual TLS.
	WorkerTLS WorkerTLS `json:"workerTLS"`
}

// AccountFor is the account holding namespace ns's streams.
func (n NATS) AccountFor(ns string) string {
	if a, ok := n.Accounts[ns]; ok {
		return a
	}
	return n.Account
}

// WorkerTLS lists the TLS files a worker is given beside its credentials.
type WorkerTLS struct {
	CA         bool `json:"ca"`
	ClientCert bool `json:"clientCert"`
}

// DNS selects the cluster DNS pods. Workers may reach them on port 53, UDP
// and TCP, and nothing else in their namespace.
type DNS struct {
	Namespace string            `json:"namespace"`
	PodLabels map[string]string `json:"podLabels"`
	// NodeLocalIP is the link-local address NodeLocal DNSCache answers on
	// (169.254.20.10 by default in its manifests); empty when the cluster
	// does not run it. Workers may reach it on port 53 too.
	NodeLocalIP string `json:"nodeLocalIP"`
}

// StreamLimits cap the size of every component's stream and give the
// replicas of a stream whose spec sets none. A spec may ask for a limit up
// to the cap; one that asks for more is refused. -1 means no cap; zero
// fields take the defaults.
//
// A file stream whose spec asks for no byte limit gets none. nats-server
// sets a stream's byte limit aside from its store and from its account's
// quota when the stream is created, full or empty, so a default byte limit
// would decide how many components fit (64 MiB each: 140 in the chart's
// 9 GiB store, 16 in a namespace's 1 GiB quota). Such a stream is bounded
// instead by its namespace's quota (the account's JetStream limit, on a
// broker with accounts per namespace), the messages cap and its maxAge.
// A memory stream, opt-in and drawing on RAM, gets the memory cap.
type StreamLimits struct {
	// MaxBytes is the most a file-backed stream's spec may ask for
	// (default 64 MiB); a spec that asks nothing gets no byte limit.
	MaxBytes int64 `json:"maxBytes"`
	// MaxMemoryBytes caps memory-backed streams (default 8 MiB).
	MaxMemoryBytes int64 `json:"maxMemoryBytes"`
	// MaxMsgs caps the messages of any stream (default 1,000,000).
	MaxMsgs int64 `json:"maxMsgs"`
	// Replicas is the replica count of a stream whose spec sets none
	// (default 1; a JetStream cluster needs at least that many servers).
	// A spec's own spec.jobs.stream.replicas wins.
	Replicas int `json:"replicas"`
}
