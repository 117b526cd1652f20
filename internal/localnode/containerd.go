package localnode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/tinyctl/tinyctl/internal/localkube"
)

// containerdNamespace is where the CRI plugin keeps Kubernetes' images.
const containerdNamespace = "k8s.io"

// containerdConfig is containerd 1.6's configuration for a node: its own
// root, state and socket under the node's directory; runc with cgroupfs;
// oom_score_adj never set below the daemon's own (this machine lacks
// CAP_SYS_RESOURCE, so a negative value fails every container); the pause
// image built here; the CNI plugins from Debian's package.
const containerdConfig = `version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %[3]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[5]q
    conf_dir = %[6]q
`

func (n *Node) socket() string { return filepath.Join(n.Dir, "containerd", "containerd.sock") }

func (n *Node) startContainerd(ctx context.Context) error {
	base := filepath.Join(n.Dir, "containerd")
	cniConf := filepath.Join(n.Dir, "cni", "net.d")
	for _, d := range []string{base, cniConf} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := n.writeCNIConfig(cniConf); err != nil {
		return err
	}
	conf := filepath.Join(base, "config.toml")
	body := fmt.Sprintf(containerdConfig, filepath.Join(base, "root"), filepath.Join(base, "state"), n.socket(),
		n.opts.SandboxImage, cniBinDir, cniConf)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		return err
	}
	if err := n.run("containerd", "containerd", "--config", conf); err != nil {
		return err
	}
	return n.poll(ctx, 30*time.Second, "containerd", func() error {
		return exec.CommandContext(ctx, "ctr", "--address", n.socket(), "version").Run()
	})
}

// writeCNIConfig writes the pod network: a bridge with the gateway on the
// host, addresses from PodCIDR (state kept in the node's directory), no
// masquerading (pod traffic never leaves the machine), hairpin so a pod
// reaches itself through its Service, and portmap for hostPorts.
func (n *Node) writeCNIConfig(dir string) error {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       networkName,
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": bridgeName, "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  []any{[]any{map[string]any{"subnet": PodCIDR}}},
					"routes":  []any{map[string]any{"dst": "0.0.0.0/0"}},
					"dataDir": filepath.Join(n.Dir, "cni", "ipam"),
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]any{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "10-tinyctl.conflist"), b, 0o644)
}

// importImages loads every image tarball into containerd's Kubernetes
// namespace, so pods find them without pulling.
func (n *Node) importImages(ctx context.Context) error {
	for _, tar := range n.opts.Images {
		start := time.Now()
		out, err := exec.CommandContext(ctx, "ctr", "--address", n.socket(), "-n", containerdNamespace,
			"images", "import", tar).CombinedOutput()
		if err != nil {
			return fmt.Errorf("localnode: import %s: %w: %s", tar, err, out)
		}
		fmt.Fprintf(n.opts.Log, "localnode: imported %s in %s\n", filepath.Base(tar), time.Since(start).Round(10*time.Millisecond))
	}
	return nil
}

// poll calls probe until it succeeds, a process of the node exits, or
// timeout passes.
func (n *Node) poll(ctx context.Context, timeout time.Duration, what string, probe func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := n.exited(); err != nil {
			return err
		}
		err := probe()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localnode: %s not up: %v: %w\n%s", what, err, ctx.Err(), localkube.LogTail(n.Dir, what))
		case <-tick.C:
		}
	}
}
