// Package node is the end-to-end test on a real node: `tinyctl install`
// with its defaults on a one-node cluster (package localnode) whose images
// are built here, then a component published, jobs produced, processed and
// acked by worker pods, an update rolled out, the leader killed, a delete —
// all through the tinyctl binary, as a user would run it.
package node

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/localnode"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

var (
	// kube is the cluster's control plane, with its audit log.
	kube *testenv.Kube
	// cluster is the control plane and its node.
	cluster *localnode.Cluster
	// tinyctlBin is the tinyctl binary under test.
	tinyctlBin string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

// run builds the images a default install runs and the tinyctl binary,
// starts the cluster, runs the tests and stops it. A missing part fails
// the package: it never skips.
func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	root, err := testenv.RepoRoot()
	if err != nil {
		return fail(err)
	}
	images, err := localnode.ProductImages(root)
	if err != nil {
		return fail(err)
	}
	keda, err := localnode.KEDAImages(ctx)
	if err != nil {
		return fail(err)
	}
	images = append(images, keda...)
	dir, err := os.MkdirTemp("", "e2e-node-images-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	tars, err := localnode.BuildImages(ctx, dir, images, os.Stderr)
	if err != nil {
		return fail(err)
	}
	bin, cleanup, err := testenv.BuildTinyctl()
	if err != nil {
		return fail(err)
	}
	defer cleanup()
	tinyctlBin = bin
	if cluster, err = localnode.StartCluster(ctx, tars, os.Stderr); err != nil {
		return fail(err)
	}
	defer cluster.Stop()
	kube = &testenv.Kube{ControlPlane: cluster.ControlPlane}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "node processes' logs:\n%s", cluster.Node.Logs())
	}
	return code
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "e2e/node:", err)
	return 1
}
