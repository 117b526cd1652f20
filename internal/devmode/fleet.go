package devmode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/fleet"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/localkube"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
	"github.com/tinyctl/tinyctl/serve"
)

// HubDomain is the JetStream domain of the dev fleet's hub.
const HubDomain = "hub"

// member is one cluster of the dev fleet: its NATS, a leafnode of the hub;
// its control plane; its controller.
type member struct {
	name   string
	labels map[string]string
	nats   *bus.Embedded
	cp     *localkube.ControlPlane
	ctrl   *serve.Process
	done   chan error
}

// memberName and memberLabels name cluster i (from 1) of the dev fleet.
func memberName(i int) string { return "dev-" + strconv.Itoa(i) }

func memberLabels(i int) map[string]string {
	return map[string]string{"env": "dev", "region": "r" + strconv.Itoa(i)}
}

// runFleet runs a hub and o.Clusters member clusters, joins them, publishes
// the examples at the hub, prints how to use it and runs until ctx ends.
func runFleet(ctx context.Context, o Options, dir string) error {
	step(o.Out, "starting the hub NATS (JetStream domain "+HubDomain+")")
	hub, err := bus.StartEmbedded(ctx, bus.EmbeddedConfig{StoreDir: filepath.Join(dir, "hub"), Port: o.NATSPort,
		MonitorPort: -1, LeafnodePort: -1, ServerName: "tinyctl-dev-hub", JetStreamDomain: HubDomain})
	if err != nil {
		return fmt.Errorf("hub NATS: %w (is port %d in use? try --nats-port -1)", err, o.NATSPort)
	}
	defer func() { _ = hub.Shutdown(context.WithoutCancel(ctx)) }()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var members []*member
	defer func() { stopMembers(o.Out, members, cancel) }()
	for i := 1; i <= o.Clusters; i++ {
		m, err := startMember(ctx, o, dir, hub, i)
		if m != nil {
			members = append(members, m)
		}
		if err != nil {
			return err
		}
	}
	if err := joinAll(ctx, hub.ClientURL(), members); err != nil {
		return err
	}
	if _, err := publishExamples(ctx, o, hub.ClientURL(), nil); err != nil {
		return err
	}
	printFleetUsage(o.Out, hub, members)
	return waitMembers(ctx, members)
}

// startMember starts cluster i: its NATS as a leaf of hub, a control plane
// and a controller reading a mirror of the hub's specs. A member returned
// with an error is partly started and must be stopped.
func startMember(ctx context.Context, o Options, dir string, hub *bus.Embedded, i int) (*member, error) {
	m := &member{name: memberName(i), labels: memberLabels(i), done: make(chan error, 1)}
	step(o.Out, fmt.Sprintf("starting cluster %s: NATS leafnode (domain %s), etcd + kube-apiserver, controller", m.name, m.name))
	var err error
	m.nats, err = bus.StartEmbedded(ctx, bus.EmbeddedConfig{StoreDir: filepath.Join(dir, m.name, "nats"), Port: -1,
		ServerName: "tinyctl-" + m.name, JetStreamDomain: m.name,
		LeafRemotes: []bus.LeafRemote{{URLs: []string{hub.LeafnodeURL()}, LocalOnly: fleet.LocalOnly(fleet.Buckets{})}}})
	if err != nil {
		return nil, fmt.Errorf("%s NATS: %w", m.name, err)
	}
	if m.cp, err = localkube.Start(ctx, localkube.Options{Log: io.Discard}); err != nil {
		return m, fmt.Errorf("%s control plane: %w", m.name, err)
	}
	if err := installCRDs(ctx, m.cp); err != nil {
		return m, err
	}
	m.ctrl, err = serve.New(serve.Config{
		NATS:       bus.Config{URLs: []string{m.nats.ClientURL()}, Name: "tinyctl-" + m.name},
		Kubeconfig: m.cp.Kubeconfig,
		HubDomain:  HubDomain,
		Loop: reconcile.Config{Cluster: render.Cluster{Name: m.name, NATS: render.NATS{URL: m.nats.ClientURL()}}, ClusterLabels: m.labels,
			CreateNamespaces: true, Recheck: 5 * time.Second, ReadyWhenApplied: true},
		HealthAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Holder: m.name, LeaseTTL: 3 * time.Second,
	})
	if err != nil {
		return m, fmt.Errorf("%s controller: %w", m.name, err)
	}
	go func() { m.done <- m.ctrl.Run(o.Log.WithContext(ctx)) }() // serve names the cluster in its log
	if err := m.ctrl.WaitReady(ctx, true); err != nil {
		return m, fmt.Errorf("%s controller: %w", m.name, err)
	}
	return m, nil
}

// joinAll makes the hub gather every member's status.
func joinAll(ctx context.Context, hubURL string, members []*member) error {
	conn, err := bus.Connect(ctx, bus.Config{URLs: []string{hubURL}, Name: "tinyctl-dev-join"}, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	c, err := client.New(ctx, conn.NATS(), client.Config{Create: true})
	if err != nil {
		return err
	}
	for _, m := range members {
		if err := c.Join(ctx, m.name, ""); err != nil {
			return err
		}
	}
	return nil
}

// waitMembers runs until ctx ends or a controller stops.
func waitMembers(ctx context.Context, members []*member) error {
	stopped := make(chan error, len(members))
	for _, m := range members {
		go func() {
			err := <-m.done
			m.done <- err // for stopMembers
			stopped <- fmt.Errorf("%s controller stopped: %w", m.name, err)
		}()
	}
	select {
	case err := <-stopped:
		return err
	case <-ctx.Done():
		return nil
	}
}

// stopMembers stops the controllers (through cancel), then the control
// planes and NATS servers.
func stopMembers(out io.Writer, members []*member, cancel context.CancelCauseFunc) {
	if len(members) > 0 {
		fmt.Fprintln(out, "\nstopping: controllers, control planes, NATS")
	}
	cancel(errors.New("dev fleet stopping"))
	for _, m := range members {
		if m.ctrl != nil {
			<-m.done
		}
		if m.cp != nil {
			m.cp.Stop()
		}
		_ = m.nats.Shutdown(context.Background())
	}
}

// printFleetUsage tells the user how to reach the hub and each cluster.
func printFleetUsage(w io.Writer, hub *bus.Embedded, members []*member) {
	fmt.Fprintf(w, "\n%s: a hub and %d clusters. In another shell, against the hub:\n\n", ReadyLine, len(members))
	fmt.Fprintf(w, "  export TINYCTL_NATS_URL=%s\n\n", hub.ClientURL())
	fmt.Fprintln(w, "  tinyctl status -A        # one row per component per cluster")
	fmt.Fprintln(w, "  tinyctl clusters         # labels, heartbeats, placed/ready/behind, hub lag")
	fmt.Fprintln(w, "  tinyctl apply -f examples/pdf-extractor.yaml   # publish once; every selected cluster follows")
	fmt.Fprintln(w, "\nEach cluster's API server and NATS:")
	for _, m := range members {
		fmt.Fprintf(w, "  %s (labels %s): KUBECONFIG=%s  NATS %s\n", m.name, labels.Set(m.labels), m.cp.Kubeconfig, m.nats.ClientURL())
	}
	fmt.Fprintln(w, "\nNo nodes and no KEDA run in dev mode; local workers run only with one cluster. Press Ctrl-C to stop everything.")
}
