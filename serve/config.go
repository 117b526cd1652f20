package serve

import (
	"fmt"
	"os"
	"time"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/render"
)

// Config is everything a controller process needs. Zero fields take the
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
	// SpecBucket and StatusBucket name the buckets (defaults
	// tinyctl-components and tinyctl-status).
	SpecBucket, StatusBucket string
	// Cluster is what render needs; Cluster.Name also names this cluster's
	// status records, heartbeat and lease (default "default").
	Cluster render.Cluster
	// ClusterLabels are matched by placement.clusterSelector.
	ClusterLabels map[string]string
	// Workers reconcile keys in parallel (default 4).
	Workers int
	// Namespaces the controller may manage; empty means all.
	Namespaces []string
	// CreateNamespaces lets the controller create missing namespaces.
	CreateNamespaces bool
	// MetricsAddr and HealthAddr are listen addresses (defaults :9090 and
	// :8081); "-" disables the server.
	MetricsAddr, HealthAddr string
	// Holder names this process in the lease (default hostname-pid).
	Holder string
	// LeaseTTL is how long a leader may go without renewing before a
	// standby takes over (default 15s, whole seconds).
	LeaseTTL time.Duration
	// HeartbeatTTL is how long the cluster's heartbeat lives without renewal
	// (default 30s); status readers call a cluster stale after it.
	HeartbeatTTL time.Duration
	// ShutdownGrace bounds how long in-flight reconciles may finish after
	// SIGTERM (default 10s).
	ShutdownGrace time.Duration
	// Recheck is the period of the loop's periodic checks (default 30s).
	Recheck time.Duration
}

func (c Config) withDefaults() Config {
	c.Cluster = c.Cluster.WithDefaults()
	if c.MetricsAddr == "" {
		c.MetricsAddr = ":9090"
	}
	if c.HealthAddr == "" {
		c.HealthAddr = ":8081"
	}
	if c.Holder == "" {
		host, _ := os.Hostname()
		c.Holder = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = lease.DefaultTTL
	}
	if c.HeartbeatTTL == 0 {
		c.HeartbeatTTL = 30 * time.Second
	}
	return c
}

// leaseName is the lease one cluster's controllers campaign for.
func (c Config) leaseName() string { return "controller." + c.Cluster.Name }
