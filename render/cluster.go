package render

import (
	"cmp"
	"errors"

	"github.com/tinyctl/tinyctl/api/cluster"
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
	// DefaultMonitoringNamespace is where the Prometheus that scrapes
	// workers' metrics runs (kube-prometheus-stack's usual namespace).
	DefaultMonitoringNamespace = "monitoring"
	// DefaultRunAsUser is the non-root uid (and gid) workers run as: the
	// "nonroot" user of distroless images.
	DefaultRunAsUser int64 = 65532
)

// CredentialsDir is where the NATS credentials Secret is mounted in the
// worker container, read-only.
const CredentialsDir = podlayout.CredentialsDir

// Cluster is what rendering needs to know about the cluster a component
// runs in: the settings a controller publishes in its heartbeat
// (cluster.Settings, their wire type, defined once there), with the
// defaults of the runtime `tinyctl install` makes (WithDefaults) and the
// checks render makes of them (Check). The zero value of any field means
// its default, so a caller sets only what differs. cluster.Settings(cl)
// and Cluster(s) convert.
type Cluster cluster.Settings

// The parts of a Cluster, defined with it in package cluster.
type (
	NATS      = cluster.NATS
	WorkerTLS = cluster.WorkerTLS
	DNS       = cluster.DNS
	Collector = cluster.Collector
	Network   = cluster.Network
)

// PerComponent, as NATS.CredentialsSecret, gives each component a Secret of
// its own with credentials minted for it alone.
const PerComponent = "*"

// Keys of the TLS files in the credentials Secret.
const (
	TLSCAKey   = "ca.crt"
	TLSCertKey = "tls.crt"
	TLSKeyKey  = "tls.key"
)

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
		RunAsUser:            DefaultRunAsUser,
		MonitoringNamespaces: []string{DefaultMonitoringNamespace},
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
	if len(cl.MonitoringNamespaces) == 0 {
		cl.MonitoringNamespaces = d.MonitoringNamespaces
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
	return errors.Join(errBase, errCIDRs, checkStreams(cl.Streams))
}
