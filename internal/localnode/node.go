package localnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/internal/localkube"
)

// Addresses of the node's networks. Pods get addresses from PodCIDR on the
// bridge; Services get theirs from localkube's service range.
const (
	PodCIDR     = "10.88.0.0/16"
	bridgeName  = "tinyctl0"
	networkName = "tinyctl-localnode"
)

// readyTimeout bounds how long Start waits for the node to be Ready.
const readyTimeout = 2 * time.Minute

// Options configure Start.
type Options struct {
	// Binaries are the node's Kubernetes binaries; zero means
	// localkube.EnsureNodeBinaries.
	Binaries localkube.NodeBinaries
	// Images are image tarballs (docker save format) imported into
	// containerd before kubelet starts; one of them must provide
	// SandboxImage.
	Images []string
	// SandboxImage is the pause image's reference (default PauseImage).
	SandboxImage string
	// Log receives progress messages; nil discards them.
	Log io.Writer
}

// PauseImage is the default sandbox image: the pause program of this
// package, built by the caller into one of Options.Images.
const PauseImage = "tinyctl.local/pause:1"

// Node is a running node: containerd, kubelet, kube-controller-manager,
// kube-scheduler, kube-proxy and the cluster DNS server.
type Node struct {
	// Name is the node's name (this machine's host name).
	Name string
	// IP is the node's address: the API server advertises it, kubelet
	// reports it, and the DNS server listens on it.
	IP string
	// Dir is the state directory: configuration, logs, containerd's and
	// kubelet's data.
	Dir string

	cp      *localkube.ControlPlane
	opts    Options
	procs   []*localkube.Process // in start order
	dns     *dnsServer
	unlock  func()
	undo    *undoLog
	stopped bool
}

// Start brings up a node for cp, which must have been started with
// AdvertiseAddress set to HostIP(). It waits for the machine-wide lock (as
// long as ctx allows), undoes a node left behind by a dead run, checks the
// prerequisites, and returns once the node is Ready. On failure it undoes
// what it did and returns an error with the failing process's log tail.
func Start(ctx context.Context, cp *localkube.ControlPlane, opts Options) (*Node, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.SandboxImage == "" {
		opts.SandboxImage = PauseImage
	}
	if err := checkPrerequisites(); err != nil {
		return nil, err
	}
	if opts.Binaries == (localkube.NodeBinaries{}) {
		b, err := localkube.EnsureNodeBinaries(ctx, opts.Log)
		if err != nil {
			return nil, err
		}
		opts.Binaries = b
	}
	ip, err := HostIP()
	if err != nil {
		return nil, err
	}
	name, err := nodeName()
	if err != nil {
		return nil, err
	}
	unlock, err := lockMachine(ctx, opts.Log)
	if err != nil {
		return nil, err
	}
	reapStale(opts.Log)
	n := &Node{Name: name, IP: ip, cp: cp, opts: opts, unlock: unlock}
	if err := n.start(ctx); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	started := time.Now()
	if err := os.MkdirAll(stateRoot(), 0o755); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	dir, err := os.MkdirTemp(stateRoot(), fmt.Sprintf("run-%d-", os.Getpid()))
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	n.Dir = dir
	if n.undo, err = prepareHost(dir); err != nil {
		return err
	}
	for _, step := range []func(context.Context) error{n.startContainerd, n.importImages, n.startDNS, n.startKubelet, n.startControllers} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	if err := n.waitReady(ctx); err != nil {
		return err
	}
	fmt.Fprintf(n.opts.Log, "localnode: node %s (%s) ready in %s\n", n.Name, n.IP, time.Since(started).Round(100*time.Millisecond))
	return nil
}

// start runs one of the node's processes and remembers it for Stop.
func (n *Node) run(name, bin string, args ...string) error {
	p, err := localkube.StartProcess(n.Dir, name, bin, args...)
	if err != nil {
		return err
	}
	n.procs = append(n.procs, p)
	return nil
}

// exited returns the error of the first of the node's processes that has
// ended, with its log tail, or nil while all run.
func (n *Node) exited() error {
	for _, p := range n.procs {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%w\n%s", err, localkube.LogTail(n.Dir, p.Name()))
		}
	}
	return nil
}

// waitReady polls until the node reports Ready and the default namespace
// has its ServiceAccount (the controller manager's first work), or a
// process exits, or the deadline passes.
func (n *Node) waitReady(ctx context.Context) error {
	kube, err := kubernetes.NewForConfig(n.cp.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if err := n.exited(); err != nil {
			return err
		}
		if last = n.ready(ctx, kube); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not ready: %v: %w\n%s", n.Name, last, ctx.Err(), localkube.LogTail(n.Dir, "kubelet"))
		case <-tick.C:
		}
	}
}

func (n *Node) ready(ctx context.Context, kube kubernetes.Interface) error {
	node, err := kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status != corev1.ConditionTrue {
				return fmt.Errorf("node Ready=%s: %s", c.Status, c.Message)
			}
			ready = true
		}
	}
	if !ready {
		return errors.New("node has no Ready condition yet")
	}
	if _, err := kube.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return fmt.Errorf("default ServiceAccount: %w", err)
	}
	return nil
}

// Stop ends every process of the node, removes its pods' containers,
// mounts, network namespaces and cgroups, restores the sysctls and
// iptables rules it changed, removes its state and releases the machine
// lock. It is safe to call more than once. The control plane is left
// running.
func (n *Node) Stop() {
	if n.stopped {
		return
	}
	n.stopped = true
	if n.dns != nil {
		n.dns.stop()
	}
	for i := len(n.procs) - 1; i >= 0; i-- {
		n.procs[i].Stop()
	}
	if n.Dir != "" {
		cleanup(n.Dir, n.undo, n.opts.Log)
	}
	if n.unlock != nil {
		n.unlock()
	}
}

// Logs returns the tails of every process's log, for a failing test.
func (n *Node) Logs() string {
	var b strings.Builder
	for _, p := range n.procs {
		b.WriteString(localkube.LogTail(n.Dir, p.Name()))
		b.WriteString("\n")
	}
	return b.String()
}

// stateRoot holds one directory per node run, named run-<owner pid>-<random>.
func stateRoot() string { return filepath.Join(os.TempDir(), "tinyctl-localnode") }

// nodeName is this machine's host name, as kubelet names the node.
func nodeName() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("host name: %w", err)
	}
	return strings.ToLower(h), nil
}
