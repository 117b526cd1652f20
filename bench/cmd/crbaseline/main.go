// Command crbaseline is the controller-runtime baseline of the benchmark:
// the least a controller-runtime operator needs to do what `tinyctl serve`
// does for a component kept in a CRD instead of a KV bucket. It watches
// Components of group bench.tinyctl.io (their spec is tinyctl's
// api.Spec), renders each with tinyctl's render package, ensures the
// stream and durable consumer with tinyctl's bus/streams, server-side
// applies the NetworkPolicy and the Deployment, and patches the
// Component's status Ready. No leader election, metrics, drift, pruning
// or deletion: a floor for the framework, not a product.
//
// The driver (cmd/bench) builds and runs it with
//
//	crbaseline -kubeconfig FILE -nats-url URL -workers 4
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/render"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "crbaseline:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	// A flag set of its own: controller-runtime registers --kubeconfig on
	// the global one.
	fs := flag.NewFlagSet("crbaseline", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file")
	natsURL := fs.String("nats-url", "", "NATS server URL")
	workers := fs.Int("workers", 4, "concurrent reconciles")
	_ = fs.Parse(os.Args[1:])
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	// What controller-runtime's own config loader does: no client-side
	// limit, API Priority and Fairness decides.
	cfg.QPS = -1
	conn, err := bus.Connect(ctx, bus.Config{URLs: []string{*natsURL}, Name: "crbaseline"}, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics: metricsserver.Options{BindAddress: "0"},
		Client:  client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	})
	if err != nil {
		return err
	}
	r := &reconciler{client: mgr.GetClient(), streams: streams.New(conn, 0), cluster: render.DefaultCluster()}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("component").
		For(newComponent()).
		WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
		Complete(r)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
