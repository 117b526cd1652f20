package render

import (
	"cmp"
	"errors"

	"github.com/tinyctl/tinyctl/api/podlayout"
)

// Defaults used by DefaultCluster and filled in by Cluster.WithDefaults.
// They match the runtime `tinyctl install` provisions: a NATS broker in
// namespace tinyctl-system behind Service "nats".
const (
	DefaultClusterName        = "default"
	DefaultNATSNamespace      = "tinyctl-system"
	DefaultNATSURL            = "nats://nats." + DefaultNATSNamespace + ".svc:4222"
	DefaultNATSClientPort     = 4222
	DefaultMonitoringEndpoint = "nats." + DefaultNATSNamespace + ".svc:8222"
	// DefaultAccount is the account KEDA queries when NATS runs without
	// accounts (token or user/password auth): the global account.
	DefaultAccount        = "$G"
	DefaultCredentialsKey = "nats.creds"
	DefaultDNSNamespace   = "kube-system"
	// DefaultCollectorEndpoint is the OTLP (gRPC) endpoint of the trace
	// collector `tinyctl install` provisions, given to workers.
	DefaultCollectorEndpoint = "http://collector." + DefaultNATSNamespace + ".svc:4317"
	// DefaultRunAsUser is the non-root uid (and gid) workers run as: the
	// "nonroot" user of distroless images.
	DefaultRunAsUser int64 = 65532
)

// CredentialsDir is where the NATS credentials Secret is mounted in the
// worker container, read-only.
const CredentialsDir = podlayout.CredentialsDir

// Cluster is what rendering needs to know about the cluster a component runs
// in: where its NATS broker is, how KEDA reaches it, and how workers run.
// The zero value of any field means its default (see WithDefaults), so a
// caller sets only what differs from the runtime `tinyctl install` makes.
type Cluster struct {
	// Name identifies this cluster in a fleet. It is recorded on every
	// child in AnnotationCluster.
	Name string
	// NATS locates the broker workers connect to.
	NATS NATS
	// DNS selects the cluster DNS pods workers may query.
	DNS DNS
	// Collector is the OpenTelemetry collector workers export traces to.
	Collector Collector
	// Network are the cluster's own address ranges: `internet` egress
	// excludes them, as it excludes the link-local metadata addresses.
	Network Network
	// RunAsUser is the uid, gid and fsGroup of worker pods. It must not be 0.
	RunAsUser int64
	// Streams caps every component's stream (see StreamLimits).
	Streams StreamLimits
}

// Collector says where workers send telemetry: every egress posture allows
// it, the way it allows NATS and DNS.
type Collector struct {
	// Endpoint is given to workers as OTEL_EXPORTER_OTLP_ENDPOINT; "-"
	// means no collector (nothing is given or allowed).
	Endpoint string
	// Namespace and PodLabels select the collector's pods; Ports are its
	// OTLP ports (gRPC and HTTP).
	Namespace string
	PodLabels map[string]string
	Ports     []int32
}

// Network holds the cluster's pod and service address ranges (CIDRs).
type Network struct {
	PodCIDRs     []string
	ServiceCIDRs []string
}

// NATS says where workers and KEDA find the NATS broker.
type NATS struct {
	// URL is given to workers in the NATS_URL environment variable.
	URL string
	// Namespace and PodLabels select the broker's pods for the egress
	// NetworkPolicy; ClientPort is the TCP port workers connect to.
	Namespace  string
	PodLabels  map[string]string
	ClientPort int32
	// MonitoringEndpoint is the broker's HTTP monitoring host:port, given to
	// KEDA's nats-jetstream trigger as natsServerMonitoringEndpoint.
	MonitoringEndpoint string
	// Account is the NATS account that holds the streams, as KEDA names it.
	Account string
	// Accounts, when namespaces have NATS accounts of their own, is the
	// account holding each namespace's streams; a namespace not listed
	// uses Account.
	Accounts map[string]string
	// JSAPIPrefix, when set, is the JetStream API prefix workers use
	// (TINYCTL_JS_API_PREFIX): their account imports their stream's API
	// under it instead of having JetStream of its own.
	JSAPIPrefix string
	// CredentialsSecret names a Secret in the component's namespace holding
	// the worker's NATS credentials, mounted read-only at CredentialsDir:
	// empty mounts none; PerComponent mounts the component's own Secret
	// (CredentialsSecretName), which the controller mints; any other name
	// is one Secret every component shares.
	CredentialsSecret string
	// CredentialsKey is the key of that Secret holding the credentials
	// file; the worker finds it at CredentialsDir/CredentialsKey, named by
	// the NATS_CREDS environment variable.
	CredentialsKey string
	// WorkerTLS says which TLS files the credentials Secret also holds:
	// the CA of the broker's certificate, and a client certificate for
	// mutual TLS.
	WorkerTLS WorkerTLS
}

// AccountFor is the account holding namespace ns's streams.
func (n NATS) AccountFor(ns string) string {
	if a, ok := n.Accounts[ns]; ok {
		return a
	}
	return n.Account
}

// PerComponent, as NATS.CredentialsSecret, gives each component a Secret of
// its own with credentials minted for it alone.
const PerComponent = "*"

// WorkerTLS lists the TLS files a worker is given, at CredentialsDir under
// the keys TLSCAKey, TLSCertKey and TLSKeyKey.
type WorkerTLS struct {
	CA         bool
	ClientCert bool
}

// Keys of the TLS files in the credentials Secret.
const (
	TLSCAKey   = "ca.crt"
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
)

// DNS selects the cluster DNS pods. Workers may reach them on port 53, UDP
// and TCP, and nothing else in their namespace.
type DNS struct {
	Namespace string
	PodLabels map[string]string
	// NodeLocalIP is the link-local address NodeLocal DNSCache answers on
	// (169.254.20.10 by default in its manifests); empty when the cluster
	// does not run it. Workers may reach it on port 53 too.
	NodeLocalIP string
}

// DefaultCluster returns the settings for a cluster provisioned by
// `tinyctl install` with no options: NATS at DefaultNATSURL without mounted
// credentials, KEDA reading DefaultMonitoringEndpoint in account "$G", DNS
// served by kube-system pods labelled k8s-app=kube-dns, workers as uid 65532.
func DefaultCluster() Cluster {
	return Cluster{
		Name: DefaultClusterName,
		NATS: NATS{
			URL:                DefaultNATSURL,
			Namespace:          DefaultNATSNamespace,
			PodLabels:          map[string]string{"app.kubernetes.io/name": "nats"},
			ClientPort:         DefaultNATSClientPort,
			MonitoringEndpoint: DefaultMonitoringEndpoint,
			Account:            DefaultAccount,
			CredentialsKey:     DefaultCredentialsKey,
		},
		DNS: DNS{
			Namespace: DefaultDNSNamespace,
			PodLabels: map[string]string{"k8s-app": "kube-dns"},
		},
		Collector: Collector{
			Endpoint:  DefaultCollectorEndpoint,
			Namespace: DefaultNATSNamespace,
			PodLabels: map[string]string{"app.kubernetes.io/name": "collector"},
			Ports:     []int32{4317, 4318},
		},
		RunAsUser: DefaultRunAsUser,
		Streams: StreamLimits{MaxBytes: DefaultStreamMaxBytes, MaxMemoryBytes: DefaultStreamMaxMemoryBytes,
			MaxMsgs: DefaultStreamMaxMsgs, Replicas: DefaultStreamReplicas},
	}
}

// WithDefaults returns cl with every zero field set from DefaultCluster.
// CredentialsSecret stays empty when unset: mounting credentials is opt-in.
func (cl Cluster) WithDefaults() Cluster {
	d := DefaultCluster()
	cl.Name = cmp.Or(cl.Name, d.Name)
	cl.NATS.URL = cmp.Or(cl.NATS.URL, d.NATS.URL)
	cl.NATS.Namespace = cmp.Or(cl.NATS.Namespace, d.NATS.Namespace)
	cl.NATS.MonitoringEndpoint = cmp.Or(cl.NATS.MonitoringEndpoint, d.NATS.MonitoringEndpoint)
	cl.NATS.Account = cmp.Or(cl.NATS.Account, d.NATS.Account)
	cl.NATS.CredentialsKey = cmp.Or(cl.NATS.CredentialsKey, d.NATS.CredentialsKey)
	cl.DNS.Namespace = cmp.Or(cl.DNS.Namespace, d.DNS.Namespace)
	if len(cl.NATS.PodLabels) == 0 {
		cl.NATS.PodLabels = d.NATS.PodLabels
	}
	if cl.NATS.ClientPort == 0 {
		cl.NATS.ClientPort = d.NATS.ClientPort
	}
	if len(cl.DNS.PodLabels) == 0 {
		cl.DNS.PodLabels = d.DNS.PodLabels
	}
	cl.Collector.Endpoint = cmp.Or(cl.Collector.Endpoint, d.Collector.Endpoint)
	cl.Collector.Namespace = cmp.Or(cl.Collector.Namespace, d.Collector.Namespace)
	if len(cl.Collector.PodLabels) == 0 {
		cl.Collector.PodLabels = d.Collector.PodLabels
	}
	if len(cl.Collector.Ports) == 0 {
		cl.Collector.Ports = d.Collector.Ports
	}
	if cl.RunAsUser == 0 {
		cl.RunAsUser = d.RunAsUser
	}
	cl.Streams.MaxBytes = cmp.Or(cl.Streams.MaxBytes, d.Streams.MaxBytes)
	cl.Streams.MaxMemoryBytes = cmp.Or(cl.Streams.MaxMemoryBytes, d.Streams.MaxMemoryBytes)
	cl.Streams.MaxMsgs = cmp.Or(cl.Streams.MaxMsgs, d.Streams.MaxMsgs)
	cl.Streams.Replicas = cmp.Or(cl.Streams.Replicas, d.Streams.Replicas)
	return cl
}

// Check reports every cluster setting render would refuse (the pod and
// service ranges, the NodeLocal DNSCache address, the collector's ports),
// so a controller can refuse them at start instead of on every component.
func (cl Cluster) Check() error {
	cl = cl.WithDefaults()
	_, errBase := baseRules(cl)
	_, errCIDRs := clusterCIDRs(cl.Network)
	return errors.Join(errBase, errCIDRs, cl.Streams.check())
}
