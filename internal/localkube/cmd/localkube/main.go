// Command localkube builds the test control plane's binaries (`localkube
// build`, used by `task tools` and CI) or runs a control plane in the
// foreground until interrupted (`localkube up`), printing the kubeconfig path
// for kubectl.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tinyctl/tinyctl/internal/localkube"
)

const usage = `usage: localkube build   build etcd, kube-apiserver and a node's kubelet, kube-controller-manager,
                         kube-scheduler and kube-proxy into the cache (once)
       localkube up      run a control plane until Ctrl-C`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "localkube:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%s", usage)
	}
	switch args[0] {
	case "build":
		b, err := localkube.EnsureBinaries(ctx, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Printf("etcd:           %s\nkube-apiserver: %s\n", b.Etcd, b.APIServer)
		n, err := localkube.EnsureNodeBinaries(ctx, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Printf("kubelet:        %s\nkube-controller-manager, kube-scheduler, kube-proxy beside it\n", n.Kubelet)
		return nil
	case "up":
		cp, err := localkube.Start(ctx, localkube.Options{Log: os.Stderr})
		if err != nil {
			return err
		}
		defer cp.Stop()
		fmt.Printf("export KUBECONFIG=%s\n# Ctrl-C stops the control plane and removes its state\n", cp.Kubeconfig)
		<-ctx.Done()
		return nil
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
}
