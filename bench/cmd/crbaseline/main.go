// Command crbaseline is the controller-runtime baseline of the benchmark:
// an operator written the way controller-runtime's book writes one, doing
// what `tinyctl serve` does for a component kept in a CRD instead of a KV
// bucket. It watches Components of group bench.tinyctl.io (their spec is
// tinyctl's api.Spec) and the Deployments and NetworkPolicies they own
// (owner references, typed caches), renders each Component with tinyctl's
// render package, ensures the stream and durable consumer with tinyctl's
// bus/streams, server-side applies the NetworkPolicy and the Deployment
// on every reconcile (that is how it corrects drift), and patches the
// Component's status Ready at its generation. No leader election,
// pruning or deletion handling: a floor for the framework, not a product.
//
// Its defaults are controller-runtime's (B0 in docs/benchmarks.md): one
// reconcile at a time, every event reconciled, no client-side limit. B1
// is the driver's
//
//	crbaseline -kubeconfig FILE -nats-url URL -workers 4 -generation-changed
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

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

// userAgent names the baseline's requests in the API server's audit log.
const userAgent = "tinyctl-crbaseline"

func run(ctx context.Context) error {
	// A flag set of its own: controller-runtime registers --kubeconfig on
	// the global one.
	fs := flag.NewFlagSet("crbaseline", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file")
	natsURL := fs.String("nats-url", "", "NATS server URL")
	workers := fs.Int("workers", 1, "concurrent reconciles (controller-runtime's default: 1)")
	generation := fs.Bool("generation-changed", false, "reconcile a Component only when its generation changes (predicate.GenerationChangedPredicate)")
	qps := fs.Float64("kube-qps", -1, "client-side limit on API requests per second; 0 or less: none (controller-runtime's default)")
	burst := fs.Int("kube-burst", 0, "client-side burst above -kube-qps (0: twice it)")
	metricsAddr := fs.String("metrics-addr", "0", `controller-runtime's metrics listen address ("0": off)`)
	syncPeriod := fs.Duration("sync-period", 0, "informer resync period (0: controller-runtime's default, 10 hours)")
	_ = fs.Parse(os.Args[1:])
	ctrl.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{}))
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	// What controller-runtime's own config loader does unless told: no
	// client-side limit, API Priority and Fairness decides.
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	if *qps <= 0 {
		cfg.QPS, cfg.Burst = -1, 0
	} else if *burst <= 0 {
		cfg.Burst = max(1, int(2**qps))
	}
	cfg.UserAgent = userAgent
	conn, err := bus.Connect(ctx, bus.Config{URLs: []string{*natsURL}, Name: "crbaseline"}, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	opts := ctrl.Options{
		Metrics: metricsserver.Options{BindAddress: *metricsAddr},
		Client:  client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	}
	if *syncPeriod > 0 {
		opts.Cache.SyncPeriod = syncPeriod
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return err
	}
	r := &reconciler{client: mgr.GetClient(), scheme: mgr.GetScheme(), streams: streams.New(conn, 0), cluster: render.DefaultCluster()}
	var preds []predicate.Predicate
	if *generation {
		preds = append(preds, predicate.GenerationChangedPredicate{})
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("component").
		For(newComponent(), builder.WithPredicates(preds...)).
		Owns(&appsv1.Deployment{}).
		Owns(&networkingv1.NetworkPolicy{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
		Complete(r)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
