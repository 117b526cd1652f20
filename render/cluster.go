package render

import "cmp"

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
	// DefaultRunAsUser is the non-root uid (and gid) workers run as: the
	// "nonroot" user of distroless images.
	DefaultRunAsUser int64 = 65532
)

// CredentialsDir is where the NATS credentials Secret is mounted in the
// worker container, read-only.
const CredentialsDir = "/etc/tinyctl/nats"

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
	// RunAsUser is the uid, gid and fsGroup of worker pods. It must not be 0.
	RunAsUser int64
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
	// CredentialsSecret names a Secret in the component's namespace holding
	// NATS client credentials. Empty means none is mounted.
	CredentialsSecret string
	// CredentialsKey is the key of that Secret holding the credentials
	// file; the worker finds it at CredentialsDir/CredentialsKey, named by
	// the NATS_CREDS environment variable.
	CredentialsKey string
}

// DNS selects the cluster DNS pods. Workers may reach them on port 53, UDP
// and TCP, and nothing else in their namespace.
type DNS struct {
	Namespace string
	PodLabels map[string]string
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
		RunAsUser: DefaultRunAsUser,
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
	if cl.RunAsUser == 0 {
		cl.RunAsUser = d.RunAsUser
	}
	return cl
}
