package devmode

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/localnode"
	"github.com/tinyctl/tinyctl/internal/ociimage"
)

// runNode is dev mode with a real node (--node): the embedded NATS
// listening on the host's address so pods reach it, a control plane and a
// node (package localnode), and the controller judging Ready on the pods.
// Each example whose dev run command is `go run PKG` gets PKG built here
// as its image, so its worker runs as a pod; the others keep their image,
// which the offline node cannot pull (they report ImagePullBackOff).
func runNode(ctx context.Context, o Options, dir string) error {
	comps, err := readExamples(o)
	if err != nil {
		return err
	}
	host, err := localnode.HostIP()
	if err != nil {
		return err
	}
	images, built := workerImages(comps)
	step(o.Out, fmt.Sprintf("building %d image(s) for the node: the pod sandbox, and each example run with `go run PKG`", len(images)))
	tars, err := localnode.BuildImages(ctx, dir, images, o.Out)
	if err != nil {
		return fmt.Errorf("%w (run dev --node from the root of a tinyctl clone)", err)
	}
	step(o.Out, "starting NATS with JetStream on "+host)
	nats, err := bus.StartEmbedded(ctx, bus.EmbeddedConfig{Host: host,
		StoreDir: filepath.Join(dir, "nats"), Port: o.NATSPort, MonitorPort: -1, ServerName: "tinyctl-dev"})
	if err != nil {
		return fmt.Errorf("embedded NATS: %w (is port %d in use? try --nats-port -1)", err, o.NATSPort)
	}
	defer func() { _ = nats.Shutdown(context.WithoutCancel(ctx)) }()

	step(o.Out, "starting a control plane and a node (containerd, kubelet, controller manager, scheduler, kube-proxy)")
	cluster, err := localnode.StartCluster(ctx, tars, o.Out)
	if err != nil {
		return err
	}
	defer cluster.Stop()
	if err := installCRDs(ctx, cluster.ControlPlane); err != nil {
		return err
	}
	for key, ref := range built {
		fmt.Fprintf(o.Out, "  %s: runs as pods of image %s, built from its dev run command (the spec's image, command and args are replaced)\n", key, ref)
	}
	return runController(ctx, o, nats, cluster.ControlPlane, devCluster{workerNATS: nats.ClientURL(), node: true, images: built})
}

// workerImages are the images the node needs: the pod sandbox's, and one
// per component placed here whose dev run command is `go run PKG` (PKG
// built from the current directory, the tinyctl clone), by component key.
func workerImages(comps []api.Component) ([]localnode.Image, map[string]string) {
	images := []localnode.Image{localnode.Pause(".")}
	built := map[string]string{}
	for _, c := range comps {
		run := strings.Fields(c.Metadata.Annotations[api.AnnotationDevRun])
		if len(run) != 3 || run[0] != "go" || run[1] != "run" ||
			!(cluster.Identity{Name: ClusterName, Labels: ClusterLabels}).Places(c) {
			continue
		}
		ref := "tinyctl.local/dev/" + c.Metadata.Namespace + "-" + c.Metadata.Name + ":dev"
		images = append(images, localnode.Image{Ref: ref, Program: ociimage.Program{Dir: ".", Package: run[2], Path: "/worker", UID: 65532}})
		built[api.KeyOf(c)] = ref
	}
	return images, built
}
