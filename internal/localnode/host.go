package localnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tinyctl/tinyctl/internal/localkube"
)

// Packages are the Debian packages a node needs (`go tool task tools-node`
// installs them); requiredCommands are what Start checks for.
const Packages = "containerd runc containernetworking-plugins iptables conntrack"

var requiredCommands = []string{"ip", "containerd", "ctr", "runc", "iptables", "iptables-save", "iptables-restore", "ip6tables-save", "ip6tables-restore", "conntrack"}

// cniBinDir is where Debian's containernetworking-plugins puts the plugins.
const cniBinDir = "/usr/lib/cni"

// checkPrerequisites fails, naming everything missing, unless this process
// is root and the node's commands and CNI plugins are installed.
func checkPrerequisites() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (a node mounts, changes iptables and sysctls)")
	}
	for _, c := range requiredCommands {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, "command "+c)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			missing = append(missing, "CNI plugin "+filepath.Join(cniBinDir, p))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("localnode: a real node needs %s; install the packages with `go tool task tools-node` (apt-get install %s)",
		strings.Join(missing, ", "), Packages)
}

// HostIP is the address a node uses: the first IPv4 address of the
// interface that holds the default route (pods reach the API server and
// the DNS server there). It fails on a machine without one.
func HostIP() (string, error) {
	dev, err := defaultRouteDevice()
	if err != nil {
		return "", err
	}
	iface, err := net.InterfaceByName(dev)
	if err != nil {
		return "", fmt.Errorf("localnode: interface %s: %w", dev, err)
	}
	addrs, err := iface.Addrs()
	if err != nil {
		return "", fmt.Errorf("localnode: addresses of %s: %w", dev, err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			return ipn.IP.String(), nil
		}
	}
	return "", fmt.Errorf("localnode: interface %s has no IPv4 address", dev)
}

// defaultRouteDevice reads the IPv4 routing table for the default route's
// interface.
func defaultRouteDevice() (string, error) {
	b, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return "", fmt.Errorf("localnode: routes: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 2 && f[1] == "00000000" {
			return f[0], nil
		}
	}
	return "", errors.New("localnode: no default route: a node needs a non-loopback address for pods to reach the host")
}

// lockMachine takes the machine-wide node lock, waiting while another
// process holds it (saying so once on log), until ctx ends.
func lockMachine(ctx context.Context, log io.Writer) (func(), error) {
	path := filepath.Join(os.TempDir(), "tinyctl-localnode.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("localnode: lock %s: %w", path, err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("localnode: lock %s: %w", path, err)
		}
		if !said {
			fmt.Fprintf(log, "localnode: another node runs on this machine; waiting for %s\n", path)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("localnode: waiting for the node lock: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// reapStale undoes nodes whose owning process is gone. The caller holds
// the machine lock, so every directory left is stale.
func reapStale(log io.Writer) {
	entries, _ := os.ReadDir(stateRoot())
	for _, e := range entries {
		dir := filepath.Join(stateRoot(), e.Name())
		fmt.Fprintf(log, "localnode: undoing a node left behind in %s\n", dir)
		localkube.KillRecorded(dir)
		undo, err := readUndo(dir)
		if err != nil {
			fmt.Fprintf(log, "localnode: %v; removing what can be found\n", err)
		}
		cleanup(dir, undo, log)
	}
}
