package serve

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// Defaults of Config that are the process's own; the loop's defaults are
// reconcile's (reconcile.Default*), the lease's are lease.DefaultTTL.
const (
	DefaultMetricsAddr  = ":9090"
	DefaultHealthAddr   = ":8081"
	DefaultHeartbeatTTL = 30 * time.Second
)

// Config is everything a controller process needs: the one configuration
// `tinyctl serve`'s flags, dev mode and tests fill. Zero fields take the
// defaults documented on each field.
type Config struct {
	// NATS is how to reach the broker. Ignored when Embedded is set.
	NATS bus.Config
	// Embedded, when not nil, runs a NATS server inside the process and
	// connects to it (single-binary and dev setups).
	Embedded *bus.EmbeddedConfig
	// Kubeconfig is a kubeconfig path; empty means in-cluster config, then
	// $KUBECONFIG, then ~/.kube/config.
	Kubeconfig string
	// KubeContext selects a kubeconfig context; empty means current.
	KubeContext string
	// KubeQPS and KubeBurst are the client-side limit on Kubernetes API
	// requests: a token bucket of KubeBurst refilled KubeQPS times a
	// second. A KubeQPS of zero or less leaves the client unlimited, so
	// the API server's Priority and Fairness alone decides (the default,
	// DefaultKubeQPS); a KubeBurst of zero is twice KubeQPS.
	KubeQPS   float32
	KubeBurst int
	// SpecBucket and StatusBucket name the buckets (defaults
	// tinyctl-components and tinyctl-status).
	SpecBucket, StatusBucket string
	// Replicas is the JetStream replica count of the spec, status,
	// heartbeat and lease buckets the controller creates, and the default
	// of Loop.Cluster.Streams.Replicas (default 1). More than one needs a
	// JetStream cluster of at least that many servers. A bucket that
	// exists with another count is refused (*kv.BucketConfigError).
	Replicas int
	// HubDomain, when set, is the JetStream domain of a fleet hub: the
	// spec bucket is then a read-only mirror of the hub's, which this
	// controller keeps reading while the hub is out of reach
	// (docs/fleet.md). Status records and heartbeats stay local; the hub
	// gathers them once the cluster has joined.
	HubDomain string
	// KubernetesEvents, when set, writes each event the loop records
	// (docs/events.md) as a Kubernetes Event about the component's
	// Deployment too; the NATS events are published either way. `tinyctl
	// serve` sets it unless --kubernetes-events=false.
	KubernetesEvents bool
	// Loop tunes the reconcile loop; Loop.Cluster.Name also names this
	// cluster's status records, heartbeat and lease (default "default").
	Loop reconcile.Config
	// MetricsAddr and HealthAddr are listen addresses (defaults :9090 and
	// :8081; port 0 picks a free port, see Process.Addrs); "-" disables
	// the server.
	MetricsAddr, HealthAddr string
	// PprofAddr serves Go's runtime profiles (/debug/pprof/) when set; off
	// by default ("" or "-"). Bind it to loopback: profiles show the
	// process's memory.
	PprofAddr string
	// Holder names this process in the lease (default hostname-pid).
	Holder string
	// LeaseTTL is how long a leader may go without renewing before a
	// standby takes over (default 15s, whole seconds).
	LeaseTTL time.Duration
	// HeartbeatTTL is how long the cluster's heartbeat lives without renewal
	// (default 30s); status readers call a cluster stale after it.
	HeartbeatTTL time.Duration
	// Identity, when set, turns on per-component identities: the
	// controller connects as a user it mints itself and mints each worker
	// its own credentials (docs/security.md).
	Identity *Identity
	// WorkerTLS names the TLS files workers get with their credentials.
	WorkerTLS WorkerTLSFiles
	// KEDAOperatorSelector is the label selector of KEDA's operator
	// Deployment, looked for in every namespace before each heartbeat
	// (default DefaultKEDAOperatorSelector).
	KEDAOperatorSelector string
}

// Identity is what the controller needs to mint users of its account: the
// account's public key and a file holding one of its signing keys' seed.
// With Tenants it also gives every namespace accounts of its own.
type Identity struct {
	Account        string
	SigningKeyFile string
	// Tenants, when set, turns on an account per namespace: its streams,
	// workers and publishers each in an account that holds nothing of
	// another namespace's (docs/security.md).
	Tenants *Tenants
}

// Tenants is what the controller needs to give namespaces accounts: an
// operator signing key (it signs the accounts and derives their keys),
// credentials of the system account to push them into the broker, and
// each namespace's JetStream quota.
type Tenants struct {
	OperatorSigningKeyFile string
	ClaimsCredsFile        string
	// FileBytes and MemoryBytes bound each namespace's streams (-1:
	// unlimited).
	FileBytes, MemoryBytes int64
}

// WorkerTLSFiles are paths of the CA, and the client certificate and key
// for mutual TLS, that workers get to reach the broker ("" for none).
type WorkerTLSFiles struct {
	CA, Cert, Key string
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	c.Replicas = cmp.Or(c.Replicas, 1)
	c.Loop.Cluster.Streams.Replicas = cmp.Or(c.Loop.Cluster.Streams.Replicas, c.Replicas)
	c.Loop = c.Loop.WithDefaults()
	// The runtime's own namespace (the broker's, with its Secrets) is never
	// managed unless it is listed.
	if ns := c.Loop.Cluster.NATS.Namespace; ns != "" && !slices.Contains(c.Loop.DenyNamespaces, ns) {
		c.Loop.DenyNamespaces = append(slices.Clone(c.Loop.DenyNamespaces), ns)
	}
	if c.MetricsAddr == "" {
		c.MetricsAddr = DefaultMetricsAddr
	}
	if c.HealthAddr == "" {
		c.HealthAddr = DefaultHealthAddr
	}
	if c.Holder == "" {
		host, _ := os.Hostname()
		c.Holder = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = lease.DefaultTTL
	}
	if c.HeartbeatTTL == 0 {
		c.HeartbeatTTL = DefaultHeartbeatTTL
	}
	if c.KEDAOperatorSelector == "" {
		c.KEDAOperatorSelector = DefaultKEDAOperatorSelector
	}
	return c
}

// cluster is this cluster's name.
func (c Config) cluster() string { return c.Loop.Cluster.Name }

// leaseName is the lease one cluster's controllers campaign for.
func (c Config) leaseName() string { return "controller." + c.cluster() }

// checkKubeLimits refuses a client-side burst without a rate to refill it
// (it would be ignored: a QPS of zero or less means no limit).
func (c Config) checkKubeLimits() error {
	if c.KubeBurst > 0 && c.KubeQPS <= 0 {
		return fmt.Errorf("kube-burst %d needs kube-qps above 0: without it there is no client-side limit to burst above", c.KubeBurst)
	}
	return nil
}

// checkReplicas refuses a bucket replica count JetStream does not allow,
// and more than one on the embedded server, which is a single node.
func (c Config) checkReplicas() error {
	switch {
	case c.Replicas < 1 || c.Replicas > render.MaxStreamReplicas:
		return fmt.Errorf("replicas %d: must be between 1 and %d", c.Replicas, render.MaxStreamReplicas)
	case c.Replicas > 1 && c.Embedded != nil:
		return fmt.Errorf("replicas %d: the embedded NATS server is a single node, which holds one replica", c.Replicas)
	}
	return nil
}

// checkNamespaces refuses an entry of a namespace list that cannot name
// a namespace (a DNS label; "*" only where it means every managed
// namespace), naming each with its list: a typo would otherwise match
// nothing, silently.
func (c Config) checkNamespaces() error {
	lists := []struct {
		flag  string
		names []string
		star  bool
	}{
		{"namespaces", c.Loop.Namespaces, false},
		{"deny-namespaces", c.Loop.DenyNamespaces, false},
		{"monitoring-namespaces", c.Loop.Cluster.MonitoringNamespaces, false},
		{"service-account-namespaces", c.Loop.ServiceAccountNamespaces, true},
	}
	var errs []error
	for _, l := range lists {
		for _, ns := range l.names {
			if l.star && ns == "*" {
				continue
			}
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("%s: %q is not a namespace name: %s", l.flag, ns, strings.Join(msgs, "; ")))
			}
		}
	}
	return errors.Join(errs...)
}
