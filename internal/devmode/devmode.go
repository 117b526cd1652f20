package devmode

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/deploy"
	"github.com/tinyctl/tinyctl/internal/localkube"
	"github.com/tinyctl/tinyctl/internal/manifest"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
	"github.com/tinyctl/tinyctl/serve"
)

// The dev cluster's name and labels, as placement sees them.
const ClusterName = "dev"

// ClusterLabels are the dev cluster's labels.
var ClusterLabels = map[string]string{"env": "dev"}

// Options configure Run.
type Options struct {
	// Dir keeps NATS data and the control plane's state; empty means a
	// temporary directory removed on exit.
	Dir string
	// NATSPort is the embedded server's client port (-1: a free one).
	NATSPort int
	// Examples is a file or directory of components to publish at start;
	// empty publishes nothing.
	Examples string
	// HealthAddr and MetricsAddr are the controller's listen addresses.
	HealthAddr, MetricsAddr string
	// Out receives what the user reads: progress, then how to connect.
	Out io.Writer
	// Log receives the controller's log.
	Log zerolog.Logger
	// Clusters, when above zero, runs a fleet instead of one cluster: a
	// hub NATS (on NATSPort) and that many member clusters, each with its
	// own NATS (a leafnode of the hub), control plane and controller
	// (docs/fleet.md).
	Clusters int
	// Node runs a real node too (containerd, kubelet, controller manager,
	// scheduler, kube-proxy; package localnode): workers run as pods, and
	// a component whose dev run command is `go run PKG` runs PKG built as
	// an image here. Needs root and the node's packages.
	Node bool
}

// Run starts everything, prints how to use it, and runs until ctx ends.
// It returns an error when a part cannot start; whatever started is
// stopped first.
func Run(ctx context.Context, o Options) error {
	dir, cleanup, err := stateDir(o.Dir)
	if err != nil {
		return err
	}
	defer cleanup()
	if o.Clusters > 0 {
		return runFleet(ctx, o, dir)
	}
	if o.Node {
		return runNode(ctx, o, dir)
	}
	step(o.Out, "starting NATS with JetStream")
	nats, err := bus.StartEmbedded(ctx, bus.EmbeddedConfig{
		StoreDir: filepath.Join(dir, "nats"), Port: o.NATSPort, MonitorPort: -1, ServerName: "tinyctl-dev"})
	if err != nil {
		return fmt.Errorf("embedded NATS: %w (is port %d in use? try --nats-port -1)", err, o.NATSPort)
	}
	defer func() { _ = nats.Shutdown(context.WithoutCancel(ctx)) }()

	step(o.Out, "starting a local Kubernetes control plane (etcd + kube-apiserver)")
	cp, err := localkube.Start(ctx, localkube.Options{Log: o.Out})
	if err != nil {
		return err
	}
	defer cp.Stop()
	if err := installCRDs(ctx, cp); err != nil {
		return err
	}
	return runController(ctx, o, nats, cp, devCluster{})
}

// devCluster is what differs when a real node runs the pods.
type devCluster struct {
	// workerNATS is the NATS URL pods use ("": the embedded server's).
	workerNATS string
	// node: pods run, so Ready waits for them, and no local workers run.
	node bool
	// images replaces the image of components (by key) with one built here.
	images map[string]string
}

func runController(ctx context.Context, o Options, nats *bus.Embedded, cp *localkube.ControlPlane, dc devCluster) error {
	step(o.Out, "starting the controller")
	ctrl, err := serve.New(serve.Config{
		NATS:       bus.Config{URLs: []string{nats.ClientURL()}, Name: "tinyctl-dev"},
		Kubeconfig: cp.Kubeconfig,
		Loop: reconcile.Config{
			Cluster:          renderCluster(dc.workerNATS),
			ClusterLabels:    ClusterLabels,
			CreateNamespaces: true,
			Recheck:          5 * time.Second,
			// Without a node no kubelet runs pods: Ready means applied.
			ReadyWhenApplied: !dc.node,
		},
		HealthAddr:  o.HealthAddr,
		MetricsAddr: o.MetricsAddr,
		Holder:      "dev",
		LeaseTTL:    3 * time.Second,
	})
	if err != nil {
		return fmt.Errorf("controller: %w (is the address in use? try --health-addr 127.0.0.1:0)", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(o.Log.WithContext(ctx)) }()
	if err := ctrl.WaitReady(ctx, true); err != nil {
		cancel(err)
		if runErr := <-done; runErr != nil {
			return fmt.Errorf("controller stopped: %w", runErr)
		}
		return err
	}
	comps, err := publishExamples(ctx, o, nats.ClientURL(), dc.images)
	if err != nil {
		cancel(err)
		<-done
		return err
	}
	workers := &localWorkers{}
	if !dc.node {
		workers = startWorkers(o.Out, comps, nats.ClientURL())
	}
	metrics, health := ctrl.Addrs()
	printUsage(o.Out, nats, cp, health, metrics, dc.node)
	select {
	case err := <-done:
		workers.stop(o.Out)
		return err
	case <-ctx.Done():
	}
	if dc.node {
		fmt.Fprintln(o.Out, "\nstopping: controller, node (its pods), control plane, NATS")
	} else {
		fmt.Fprintln(o.Out, "\nstopping: local workers, controller, control plane, NATS")
	}
	workers.stop(o.Out)
	return <-done
}

func stateDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	tmp, err := os.MkdirTemp("", "tinyctl-dev-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

func step(w io.Writer, msg string) { fmt.Fprintf(w, "• %s\n", msg) }

// installCRDs applies the ScaledObject CRD so ScaledObjects can be created
// (nothing scales them: KEDA is not running in dev mode), through the one
// Kubernetes write path.
func installCRDs(ctx context.Context, cp *localkube.ControlPlane) error {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(deploy.ScaledObjectCRD, &crd.Object); err != nil {
		return fmt.Errorf("scaledobject crd: %w", err)
	}
	m, err := apply.New(cp.Config, render.AnnotationContentHash)
	if err != nil {
		return err
	}
	if _, err := m.Apply(ctx, crd); err != nil {
		return fmt.Errorf("install ScaledObject CRD: %w", err)
	}
	return m.WaitEstablished(ctx, crd.GetName(), 30*time.Second)
}

// readExamples reads and validates the components under o.Examples.
func readExamples(o Options) ([]api.Component, error) {
	if o.Examples == "" {
		return nil, nil
	}
	srcs, err := manifest.Read([]string{o.Examples}, true, nil)
	if err != nil {
		return nil, fmt.Errorf("examples: %w", err)
	}
	set := manifest.Load(srcs, manifest.Options{})
	if len(set.Problems) > 0 {
		return nil, fmt.Errorf("examples: %s", set.Problems[0])
	}
	out := make([]api.Component, 0, len(set.Components))
	for _, c := range set.Components {
		out = append(out, c.Component)
	}
	return out, nil
}

// publishExamples publishes the components under o.Examples, each with the
// image images gives its key, if any (and that image's own command), and
// returns them as published.
func publishExamples(ctx context.Context, o Options, url string, images map[string]string) ([]api.Component, error) {
	examples, err := readExamples(o)
	if len(examples) == 0 || err != nil {
		return nil, err
	}
	conn, err := bus.Connect(ctx, bus.Config{URLs: []string{url}, Name: "tinyctl-dev-publish"}, nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	pub, err := client.New(ctx, conn.NATS(), client.Config{Create: true})
	if err != nil {
		return nil, err
	}
	for i, c := range examples {
		if img, ok := images[api.KeyOf(c)]; ok {
			// The image runs the dev run command's program, whatever
			// command the spec gives its own image.
			c.Spec.Image, c.Spec.Command, c.Spec.Args = img, nil, nil
			examples[i] = c
		}
		res, err := pub.Publish(ctx, c, client.PublishOptions{})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Out, "  component/%s %s (revision %d)\n", res.Key, res.Action, res.Revision)
	}
	return examples, nil
}
