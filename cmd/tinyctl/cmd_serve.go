package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
	"github.com/tinyctl/tinyctl/serve"
)

// serveFlags are the flags of `tinyctl serve`.
type serveFlags struct {
	kube                   cli.KubeFlags
	cfg                    serve.Config
	clusterLabels          map[string]string
	natsPodLabels          map[string]string
	collectorPodLabels     map[string]string
	logLevel, logFormat    string
	embedded               bool
	embeddedStore          string
	embeddedPort, embedMon int
	subjectPrefixes        []string
	// egressAllowClusterCIDRs and egressAllowMetadata let allow lists
	// name the cluster's ranges and the metadata ranges.
	egressAllowClusterCIDRs, egressAllowMetadata bool
	identity                                     serve.Identity
	tenants                                      serve.Tenants
	tenantFile, tenantMem                        string
	gcPercent                                    int
	memoryLimit                                  string
}

// defaultGCPercent is serve's garbage-collection target: its heap grows by
// half of what is live before a collection, not by all of it (Go's
// default). Most of serve's heap is its caches, live for the process's
// life, so Go's default kept a second copy's worth resident: at 10,000
// components peak RSS 231 MiB at 100 against 182 MiB at 50, for 31.1 s
// against 35.9 s of CPU over a 2-minute cold start (docs/benchmarks.md).
const defaultGCPercent = 50

func newServeCmd(o *options) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the controller: reconcile the spec bucket into this cluster",
		Long: `serve watches the spec bucket and reconciles every component into this
cluster: a JetStream stream and durable consumer, a Deployment, a NetworkPolicy
and a KEDA ScaledObject. Several replicas may run; one holds the cluster's lease
in NATS and writes, the others wait. SIGTERM stops taking work, lets in-flight
reconciles finish within --shutdown-grace and releases the lease.

Every flag can also be set by the environment variable shown with it.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd, o) },
	}
	f.addFlags(cmd.Flags())
	shadowClientOnlyFlags(cmd.Flags())
	return cmd
}

// clientOnlyFlags are the root's flags that mean nothing to serve: the
// namespace of the client commands (the controller manages many, chosen
// by --namespaces and --deny-namespaces) and the nats CLI context (a
// controller connects with its own flags and environment only, so that a
// context selected on a laptop cannot redirect it). Each says what to use
// instead.
var clientOnlyFlags = map[string]string{
	"namespace":    "serve takes no --namespace: the controller manages every namespace but --deny-namespaces, or those --namespaces names",
	"nats-context": "serve reads no nats CLI context: give it --nats-url and a credentials flag (or their TINYCTL_NATS_* variables)",
}

// shadowClientOnlyFlags defines clientOnlyFlags on serve itself, hidden,
// so that they are neither inherited (serve --help and docs/reference do
// not list them, their variables are not read) nor silently accepted.
func shadowClientOnlyFlags(fs *pflag.FlagSet) {
	var ignored string
	fs.StringVarP(&ignored, "namespace", "n", "", "")
	fs.StringVar(&ignored, "nats-context", "", "")
	for name := range clientOnlyFlags {
		_ = fs.MarkHidden(name)
	}
}

// refuseClientOnlyFlags is the usage error for a client-only flag given to
// serve.
func refuseClientOnlyFlags(fs *pflag.FlagSet) error {
	for _, name := range slices.Sorted(maps.Keys(clientOnlyFlags)) {
		if fs.Changed(name) {
			return usageError{errors.New(clientOnlyFlags[name])}
		}
	}
	return nil
}

func (f *serveFlags) addFlags(fs *pflag.FlagSet) {
	c := &f.cfg
	f.kube.AddFlags(fs)
	fs.StringVar(&c.Loop.Cluster.Name, "cluster-name", render.DefaultClusterName, "this cluster's name in status records, heartbeats, leases and placement")
	fs.StringToStringVar(&f.clusterLabels, "cluster-labels", nil, "this cluster's labels for placement.clusterSelector, k=v,k=v")
	fs.StringVar(&c.HubDomain, "hub-domain", "", "JetStream domain of a fleet hub: read specs from a local mirror of the hub's bucket (docs/fleet.md)")
	fs.BoolVar(&c.Loop.AcceptUnplace, "accept-unplace", false, "confirm, once, the unplaces held when the controller starts (status UnplaceHeld: components that no longer select this cluster only because its name or labels changed): their children are removed; holds that arise later are kept")
	fs.BoolVar(&c.KubernetesEvents, "kubernetes-events", true, "also write each event (docs/events.md) as a Kubernetes Event about the child written, the component's Deployment or its namespace; needs create and patch on events.k8s.io events (the chart grants them)")
	fs.IntVar(&c.Loop.Workers, "workers", reconcile.DefaultWorkers, "components reconciled in parallel")
	fs.StringSliceVar(&c.Loop.Namespaces, "namespaces", nil, "the only namespaces the controller may manage, comma-separated (default: all but --deny-namespaces)")
	fs.StringSliceVar(&c.Loop.DenyNamespaces, "deny-namespaces", reconcile.DefaultDenyNamespaces, "namespaces never managed when --namespaces is empty")
	fs.BoolVar(&c.Loop.CreateNamespaces, "create-namespaces", false, "create a component's namespace when it does not exist")
	fs.StringSliceVar(&c.Loop.Cluster.MonitoringNamespaces, "monitoring-namespaces", []string{render.DefaultMonitoringNamespace},
		"namespaces whose pods (Prometheus) the NetworkPolicy of a component with spec.metricsPort admits to its metrics port, comma-separated")
	fs.StringSliceVar(&c.Loop.ServiceAccountNamespaces, "service-account-namespaces", nil,
		`namespaces whose components may run as a ServiceAccount of their own (spec.serviceAccountName), comma-separated; "*" for every managed namespace (default: none)`)
	fs.IntVar(&c.Replicas, "replicas", 1, "JetStream replicas of the buckets the controller creates and of component streams that set none (spec.jobs.stream.replicas); more than 1 needs a JetStream cluster of that many servers")
	fs.StringVar(&c.StatusBucket, "status-bucket", status.DefaultBucket, "JetStream KV bucket for status records")
	fs.StringArrayVar(&f.subjectPrefixes, "subject-prefixes", nil,
		`subjects a namespace's components may use instead of "<namespace>.>": namespace=pattern[,pattern...], repeatable; "off" lets every namespace use every subject`)
	f.addRenderFlags(fs)
	f.addIdentityFlags(fs)
	f.addProcessFlags(fs)
	// Every flag not bound already reads TINYCTL_<FLAG NAME> (the chart sets
	// some; docs/operations.md lists them all). A renamed flag renames its
	// variable: TestServeFlagsReadTheirVariables pins the names.
	cli.BindAllEnv(fs, "TINYCTL_")
}

// addRenderFlags are what rendering needs to know about this cluster: what
// workers and KEDA are told about NATS, where the collector and DNS are, and
// the cluster's address ranges, which `internet` egress excludes.
func (f *serveFlags) addRenderFlags(fs *pflag.FlagSet) {
	n := &f.cfg.Loop.Cluster.NATS
	fs.StringVar(&n.URL, "worker-nats-url", render.DefaultNATSURL, "NATS URL given to workers (NATS_URL)")
	fs.StringVar(&n.Namespace, "nats-namespace", render.DefaultNATSNamespace, "namespace of the NATS pods workers may reach")
	fs.StringToStringVar(&f.natsPodLabels, "nats-pod-labels", map[string]string{"app.kubernetes.io/name": "nats"}, "labels of the NATS pods workers may reach")
	fs.StringVar(&n.MonitoringEndpoint, "keda-monitoring-endpoint", render.DefaultMonitoringEndpoint, "NATS monitoring host:port KEDA reads (natsServerMonitoringEndpoint)")
	fs.StringVar(&n.Account, "keda-account", render.DefaultAccount, "NATS account KEDA reads the consumers of")
	fs.StringVar(&n.CredentialsSecret, "credentials-secret", "", "Secret (in each component's namespace) with NATS credentials to mount into workers")
	col, dflt := &f.cfg.Loop.Cluster.Collector, render.DefaultCluster().Collector
	fs.StringVar(&col.Endpoint, "collector-endpoint", render.DefaultCollectorEndpoint, `OTLP endpoint of the trace collector; every egress posture allows its pods ("-": no collector)`)
	fs.StringVar(&col.Namespace, "collector-namespace", dflt.Namespace, "namespace of the collector pods workers may reach")
	fs.StringToStringVar(&f.collectorPodLabels, "collector-pod-labels", dflt.PodLabels, "labels of the collector pods workers may reach")
	nw := &f.cfg.Loop.Cluster.Network
	fs.StringSliceVar(&nw.PodCIDRs, "pod-cidrs", nil, "this cluster's pod address ranges, comma-separated; internet egress excludes them")
	fs.StringSliceVar(&nw.ServiceCIDRs, "service-cidrs", nil, "this cluster's Service address ranges, comma-separated; internet egress excludes them")
	fs.BoolVar(&f.egressAllowClusterCIDRs, "egress-allow-cluster-cidrs", false, "let a component's egress allow list name addresses in --pod-cidrs and --service-cidrs (by default such a spec is refused: pods are reached by namespace and podLabels)")
	fs.BoolVar(&f.egressAllowMetadata, "egress-allow-metadata", false, "let a component's egress allow list name the link-local and cloud metadata ranges (169.254.0.0/16, fe80::/10, fd00:ec2::254/128; by default such a spec is refused)")
	caps := &f.cfg.Loop.Cluster.Streams
	fs.Int64Var(&caps.MaxBytes, "stream-max-bytes", render.DefaultStreamMaxBytes, "the most a component may ask for as spec.jobs.stream.maxBytes for a file-backed stream (-1: no cap); a component that asks nothing gets no byte limit and sets nothing aside, bounded by its namespace's quota (--tenant-store), --stream-max-msgs and its maxAge")
	fs.Int64Var(&caps.MaxMemoryBytes, "stream-max-memory-bytes", render.DefaultStreamMaxMemoryBytes, "cap on the bytes of each memory-backed component stream (-1: no cap)")
	fs.Int64Var(&caps.MaxMsgs, "stream-max-msgs", render.DefaultStreamMaxMsgs, "cap on the messages of each component stream (-1: no cap)")
	fs.StringVar(&f.cfg.Loop.Cluster.DNS.NodeLocalIP, "dns-node-local-ip", "", "address NodeLocal DNSCache answers on (e.g. 169.254.20.10), which workers may query on port 53; empty when the cluster does not run it")
}

// addIdentityFlags turn on per-component identities and the workers' TLS.
func (f *serveFlags) addIdentityFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.identity.SigningKeyFile, "nats-account-signing-key-file", "",
		"file holding a signing key seed (SA...) of the NATS account: the controller then connects as a user it mints and gives each worker credentials of its own")
	fs.StringVar(&f.identity.Account, "nats-account", "", "public key (A...) of the NATS account the signing key signs for; also what KEDA reads")
	fs.StringVar(&f.tenants.OperatorSigningKeyFile, "nats-operator-signing-key-file", "",
		"file holding an operator signing key seed (SO...): with --nats-claims-creds, every namespace gets NATS accounts of its own (its streams, workers and publishers), signed with it")
	fs.StringVar(&f.tenants.ClaimsCredsFile, "nats-claims-creds", "",
		"credentials of a system-account user that may push account JWTs ($SYS.REQ.CLAIMS.UPDATE), for the namespaces' accounts")
	fs.StringVar(&f.tenantFile, "tenant-store", "1GiB",
		"JetStream file storage each namespace's streams may hold together (\"-1\": unlimited); on a single server the namespaces' quotas must fit its store")
	fs.StringVar(&f.tenantMem, "tenant-memory", "0",
		"JetStream memory storage each namespace's streams may hold together (0: memory streams are refused; \"-1\": unlimited)")
	fs.DurationVar(&f.cfg.Loop.CredentialsTTL, "worker-credentials-ttl", reconcile.DefaultCredentialsTTL,
		"how long minted worker credentials live; they are minted again at half of it, and a deleted component's stop working within it")
	tls := &f.cfg.WorkerTLS
	fs.StringVar(&tls.CA, "worker-tls-ca-file", "", "CA of the broker's certificate, given to workers (NATS_CA)")
	fs.StringVar(&tls.Cert, "worker-tls-cert-file", "", "client certificate given to workers for mutual TLS (NATS_CERT)")
	fs.StringVar(&tls.Key, "worker-tls-key-file", "", "key of --worker-tls-cert-file (NATS_KEY)")
}

// addProcessFlags tune the process itself.
func (f *serveFlags) addProcessFlags(fs *pflag.FlagSet) {
	c := &f.cfg
	fs.StringVar(&c.MetricsAddr, "metrics-addr", serve.DefaultMetricsAddr, `Prometheus /metrics listen address ("-" disables, port 0 picks one)`)
	fs.StringVar(&c.HealthAddr, "health-addr", serve.DefaultHealthAddr, `/healthz and /readyz listen address ("-" disables, port 0 picks one)`)
	fs.StringVar(&c.PprofAddr, "pprof-addr", "", `Go runtime profiles (/debug/pprof/) listen address, e.g. 127.0.0.1:6060; off by default (profiles show the process's memory: keep it on loopback)`)
	fs.Float32Var(&c.KubeQPS, "kube-qps", serve.DefaultKubeQPS, "client-side limit on Kubernetes API requests per second; 0 or less: none, the API server's Priority and Fairness queues the controller's requests (docs/operations.md)")
	fs.IntVar(&c.KubeBurst, "kube-burst", 0, "requests the client-side limit lets through at once above --kube-qps (0: twice --kube-qps); only with --kube-qps above 0")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "auto", "json, console, or auto (console on a terminal)")
	fs.StringVar(&c.Holder, "holder", "", "this process's name in the lease (default: hostname-pid)")
	fs.DurationVar(&c.LeaseTTL, "lease-ttl", lease.DefaultTTL, "how long a silent leader keeps the lease (whole seconds)")
	fs.DurationVar(&c.HeartbeatTTL, "heartbeat-ttl", serve.DefaultHeartbeatTTL, "how long this cluster's status stays live without a heartbeat (whole seconds)")
	fs.StringVar(&c.KEDAOperatorSelector, "keda-operator-selector", serve.DefaultKEDAOperatorSelector, "label selector of KEDA's operator Deployment, reported in the heartbeat")
	fs.DurationVar(&c.Loop.ShutdownGrace, "shutdown-grace", reconcile.DefaultShutdownGrace, "how long in-flight reconciles may finish after SIGTERM")
	fs.DurationVar(&c.Loop.Recheck, "recheck", reconcile.DefaultRecheck, "period of the checks for waiting components, deleted streams and orphans; every tenth also audits every stream's config and consumer")
	fs.IntVar(&f.gcPercent, "gc-percent", defaultGCPercent, "Go's garbage-collection target, as GOGC: the heap may grow by this percentage of what is live before a collection (100 is Go's default; lower keeps less memory resident for more CPU; -1: off, for --memory-limit alone); GOGC in the environment wins when this flag and its variable are not set")
	fs.StringVar(&f.memoryLimit, "memory-limit", "auto", "Go's soft memory limit, as GOMEMLIMIT: the heap is collected harder as it nears it. auto: 90% of the container's memory limit (none when it has none), none, or a size (300Mi, 1Gi); GOMEMLIMIT in the environment wins when this flag and its variable are not set")
	fs.BoolVar(&f.embedded, "embedded-nats", false, "run a NATS server with JetStream inside this process and use it")
	fs.StringVar(&f.embeddedStore, "embedded-nats-store", "tinyctl-data", "JetStream store directory of the embedded server")
	fs.IntVar(&f.embeddedPort, "embedded-nats-port", 4222, "client port of the embedded server (-1: random)")
	fs.IntVar(&f.embedMon, "embedded-nats-monitor-port", 8222, "monitoring port of the embedded server (0: off, -1: random)")
}

func (f *serveFlags) run(cmd *cobra.Command, o *options) error {
	if err := refuseClientOnlyFlags(cmd.Flags()); err != nil {
		return err
	}
	o.nats.NoContexts = true
	log, err := newLogger(o.errOut, f.logLevel, f.logFormat)
	if err != nil {
		return usageError{err}
	}
	routeKlog(log)
	if err := f.setRuntime(cmd, o, log); err != nil {
		return err
	}
	cfg := f.cfg
	cfg.Kubeconfig, cfg.KubeContext = f.kube.Kubeconfig, f.kube.Context
	cfg.Loop.ClusterLabels = f.clusterLabels
	if cfg.Loop.Tenancy, err = validate.ParseTenancy(f.subjectPrefixes); err != nil {
		return usageError{fmt.Errorf("--subject-prefixes: %w", err)}
	}
	cfg.Loop.Tenancy.Egress.Metadata = f.egressAllowMetadata
	if !f.egressAllowClusterCIDRs {
		nw := cfg.Loop.Cluster.Network
		cfg.Loop.Tenancy.Egress.ClusterCIDRs = slices.Concat(nw.PodCIDRs, nw.ServiceCIDRs)
	}
	if f.identity.SigningKeyFile != "" || f.identity.Account != "" {
		if f.identity.SigningKeyFile == "" || f.identity.Account == "" {
			return usageError{errors.New("--nats-account-signing-key-file and --nats-account go together")}
		}
		id := f.identity
		cfg.Identity = &id
	}
	if f.tenants.OperatorSigningKeyFile != "" || f.tenants.ClaimsCredsFile != "" {
		if cfg.Identity == nil || f.tenants.OperatorSigningKeyFile == "" || f.tenants.ClaimsCredsFile == "" {
			return usageError{errors.New("--nats-operator-signing-key-file and --nats-claims-creds go together, with --nats-account-signing-key-file")}
		}
		t := f.tenants
		if t.FileBytes, err = parseQuota("tenant-store", f.tenantFile); err != nil {
			return usageError{err}
		}
		if t.MemoryBytes, err = parseQuota("tenant-memory", f.tenantMem); err != nil {
			return usageError{err}
		}
		cfg.Identity.Tenants = &t
	}
	cfg.Loop.Cluster.NATS.PodLabels = f.natsPodLabels
	cfg.Loop.Cluster.Collector.PodLabels = f.collectorPodLabels
	cfg.SpecBucket = o.nats.Bucket
	if f.embedded {
		cfg.Embedded = &bus.EmbeddedConfig{StoreDir: f.embeddedStore, Port: f.embeddedPort, MonitorPort: f.embedMon}
	} else if cfg.NATS, err = o.nats.Config(o.getenv); err != nil {
		return err
	}
	return serve.Run(log.WithContext(cmd.Context()), cfg)
}

// newLogger builds the process logger: JSON, or human console output on a
// terminal (auto).
func newLogger(w io.Writer, level, format string) (zerolog.Logger, error) {
	// JSON lines carry milliseconds: at hundreds of reconciles a second,
	// seconds cannot order them.
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00"
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Logger{}, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	switch format {
	case "json":
	case "console":
		return zerolog.New(zerolog.ConsoleWriter{Out: w}).Level(lvl).With().Timestamp().Logger(), nil
	case "auto":
		if cli.IsTerminal(w) {
			return zerolog.New(zerolog.ConsoleWriter{Out: w}).Level(lvl).With().Timestamp().Logger(), nil
		}
	default:
		return zerolog.Logger{}, fmt.Errorf("--log-format %q: want json, console or auto", format)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// parseQuota reads a JetStream quota: a Kubernetes quantity ("1Gi",
// "512Mi", "1GiB" is read as 1Gi) or -1 for unlimited.
func parseQuota(flag, v string) (int64, error) {
	if v == "-1" {
		return -1, nil
	}
	q, err := resource.ParseQuantity(strings.TrimSuffix(v, "B"))
	if err != nil || q.Sign() < 0 {
		return 0, fmt.Errorf("--%s %q: want a size such as 1GiB or 512MiB, 0, or -1 for unlimited", flag, v)
	}
	return q.Value(), nil
}
