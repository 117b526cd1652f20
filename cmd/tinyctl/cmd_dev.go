package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tinyctl/tinyctl/internal/devmode"
)

type devFlags struct {
	dir, examples           string
	natsPort, clusters      int
	node                    bool
	healthAddr, metricsAddr string
	logLevel, logFormat     string
}

func newDevCmd(o *options) *cobra.Command {
	f := &devFlags{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run everything locally: NATS, a Kubernetes API server, the controller and the examples",
		Long: `dev starts an embedded NATS server with JetStream, a local Kubernetes control
plane (etcd and kube-apiserver, built from the source tree the first time,
which takes a few minutes), the ScaledObject CRD and the controller, publishes
the components under --examples, and prints how to point kubectl and tinyctl
at it. Ctrl-C stops everything and leaves nothing running; without --dir all
state is removed too.

--clusters N runs a fleet instead (docs/fleet.md): a hub NATS on --nats-port
and N clusters dev-1..dev-N (labels env=dev, region=r1..rN), each with its own
NATS as a leafnode of the hub, its own control plane and a controller reading a
mirror of the hub's specs, all joined to the hub. The examples are published at
the hub; tinyctl status -A and tinyctl clusters there show every cluster.
--node runs a real node too (containerd, kubelet, scheduler, controller
manager, kube-proxy; needs root and the packages go tool task tools-node
installs): workers run as pods, Ready waits for them, and an example whose
dev.tinyctl.io/run annotation is "go run PKG" runs PKG built here as its image.

Run it from a clone of the tinyctl repository: go run ./cmd/tinyctl dev`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd, o) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.dir, "dir", "", "keep NATS data and control-plane state here (default: a temporary directory removed on exit)")
	fs.StringVar(&f.examples, "examples", "examples", `components to publish at start ("" for none)`)
	fs.IntVar(&f.natsPort, "nats-port", 4222, "client port of the embedded NATS server (-1: any free port)")
	fs.BoolVar(&f.node, "node", false, "also run a real node, so workers run as pods (needs root and the node's packages)")
	fs.IntVar(&f.clusters, "clusters", 0, "run a fleet: a hub and this many clusters, each with its own NATS, API server and controller (0: one cluster)")
	fs.StringVar(&f.healthAddr, "health-addr", "127.0.0.1:8081", "controller /healthz and /readyz address")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "127.0.0.1:9090", "controller /metrics address")
	fs.StringVar(&f.logLevel, "log-level", "warn", "controller log level: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "auto", "controller log format: json, console or auto")
	return cmd
}

func (f *devFlags) run(cmd *cobra.Command, o *options) error {
	if f.clusters < 0 || f.clusters > 9 {
		return usageError{fmt.Errorf("--clusters %d: want 0 (one cluster) to 9", f.clusters)}
	}
	if f.node && f.clusters > 0 {
		return usageError{fmt.Errorf("--node runs one cluster: it cannot be combined with --clusters")}
	}
	log, err := newLogger(o.errOut, f.logLevel, f.logFormat)
	if err != nil {
		return usageError{err}
	}
	routeKlog(log)
	examples := f.examples
	if !cmd.Flags().Changed("examples") {
		if _, err := os.Stat(examples); err != nil {
			examples = "" // not in a clone: nothing to publish
		}
	}
	return devmode.Run(cmd.Context(), devmode.Options{
		Dir: f.dir, NATSPort: f.natsPort, Examples: examples,
		HealthAddr: f.healthAddr, MetricsAddr: f.metricsAddr, Clusters: f.clusters, Node: f.node,
		Out: o.out, Log: log,
	})
}
