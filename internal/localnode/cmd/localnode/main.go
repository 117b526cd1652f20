// Command localnode runs a one-node Kubernetes cluster on this machine until
// interrupted (`localnode up`, `go tool task node-up`): a local control
// plane, a real node (containerd, kubelet, controller manager, scheduler,
// kube-proxy, cluster DNS) and the images a default `tinyctl install` runs,
// built here. It prints the kubeconfig path for kubectl and tinyctl. It
// needs root and the packages `go tool task tools-node` installs. Run it
// from the module's root.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tinyctl/tinyctl/internal/localnode"
)

const usage = "usage: localnode up   run a control plane and a node with tinyctl's images until Ctrl-C"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "localnode:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) != 1 || args[0] != "up" {
		return fmt.Errorf("%s", usage)
	}
	images, err := localnode.ProductImages(".")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "localnode-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tars, err := localnode.BuildImages(ctx, dir, images, os.Stderr)
	if err != nil {
		return err
	}
	c, err := localnode.StartCluster(ctx, tars, os.Stderr)
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Printf("export KUBECONFIG=%s\n# Ctrl-C stops the node and the control plane and undoes what they changed\n", c.Kubeconfig)
	<-ctx.Done()
	return nil
}
