package localnode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// undoLog is what a node changed on the machine, written to its state
// directory before the change so that a later run can undo it.
type undoLog struct {
	// Sysctls are the values before the node started, by /proc/sys path.
	Sysctls map[string]string `json:"sysctls"`
}

// watchedSysctls are the settings the node (or kubelet and kube-proxy on
// its behalf) may change; their values are restored on Stop.
var watchedSysctls = []string{
	"net/ipv4/ip_forward",
	"net/bridge/bridge-nf-call-iptables",
	"net/bridge/bridge-nf-call-ip6tables",
	"net/ipv4/conf/all/route_localnet",
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

// nodeSysctls are set for the node: routing between the bridge and the
// host, and bridged traffic through iptables so Service replies are
// translated back.
var nodeSysctls = map[string]string{
	"net/ipv4/ip_forward":                 "1",
	"net/bridge/bridge-nf-call-iptables":  "1",
	"net/bridge/bridge-nf-call-ip6tables": "1",
}

// iptablesTables are the tables a node's rules may land in.
var iptablesTables = []string{"filter", "nat", "mangle", "raw"}

// prepareHost records the sysctls and iptables rules in dir, then sets the
// node's sysctls.
func prepareHost(dir string) (*undoLog, error) {
	u := &undoLog{Sysctls: map[string]string{}}
	for _, k := range watchedSysctls {
		if b, err := os.ReadFile(filepath.Join("/proc/sys", k)); err == nil {
			u.Sysctls[k] = strings.TrimSpace(string(b))
		}
	}
	for _, family := range []string{"iptables", "ip6tables"} {
		out, err := exec.Command(family + "-save").Output()
		if err != nil {
			return nil, fmt.Errorf("localnode: %s-save: %w", family, err)
		}
		if err := os.WriteFile(filepath.Join(dir, family+".rules"), out, 0o600); err != nil {
			return nil, err
		}
	}
	b, err := json.Marshal(u)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "undo.json"), b, 0o600); err != nil {
		return nil, err
	}
	for k, v := range nodeSysctls {
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			return nil, fmt.Errorf("localnode: sysctl %s=%s: %w", strings.ReplaceAll(k, "/", "."), v, err)
		}
	}
	return u, nil
}

// readUndo reads the undo log of a node's state directory.
func readUndo(dir string) (*undoLog, error) {
	b, err := os.ReadFile(filepath.Join(dir, "undo.json"))
	if err != nil {
		return nil, fmt.Errorf("undo log: %w", err)
	}
	var u undoLog
	if err := json.Unmarshal(b, &u); err != nil {
		return nil, fmt.Errorf("undo log %s: %w", dir, err)
	}
	return &u, nil
}

// cleanup undoes a node whose processes have stopped (or been killed): it
// kills what still runs in its pods, removes their mounts, network
// namespaces and cgroups and the bridge, restores iptables and the
// sysctls (when undo is not nil), and removes dir. Every step is tried;
// failures are logged.
func cleanup(dir string, undo *undoLog, log io.Writer) {
	report := func(what string, err error) {
		if err != nil {
			fmt.Fprintf(log, "localnode: cleanup: %s: %v\n", what, err)
		}
	}
	killPods()
	killShims(dir)
	report("unmount", unmountAll(dir))
	report("cgroups", removeCgroups())
	if err := exec.Command("ip", "link", "del", bridgeName).Run(); err == nil {
		fmt.Fprintf(log, "localnode: removed bridge %s\n", bridgeName)
	}
	for _, family := range []string{"iptables", "ip6tables"} {
		report(family, restoreRules(dir, family))
	}
	if undo != nil {
		for k, v := range undo.Sysctls {
			report("sysctl "+k, os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644))
		}
	}
	report("state", os.RemoveAll(dir))
}

// kubepodsDirs are the kubepods cgroups of every v1 controller (and of the
// unified hierarchy, if kubelet made one).
func kubepodsDirs() []string {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	if d, err := os.Stat("/sys/fs/cgroup/kubepods"); err == nil && d.IsDir() {
		dirs = append(dirs, "/sys/fs/cgroup/kubepods")
	}
	return dirs
}

// killPods SIGKILLs every process in the kubepods cgroups until none is
// left (or 10 s pass).
func killPods() {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pids := podPIDs()
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond) // the kernel needs a moment to reap them
	}
}

func podPIDs() []int {
	seen := map[int]bool{}
	for _, root := range kubepodsDirs() {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			b, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	var pids []int
	for pid := range seen {
		pids = append(pids, pid)
	}
	return pids
}

// killShims SIGKILLs containerd's runc shims of the containerd whose
// state lives in dir (their command line names its socket there).
func killShims(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("containerd-shim")) || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// unmountAll detaches every mount under dir and the pods' network
// namespaces (containerd's cni-* under /run/netns), deepest first, and
// removes the namespaces' files.
func unmountAll(dir string) error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if strings.HasPrefix(mp, dir+"/") || strings.HasPrefix(mp, "/run/netns/cni-") {
			points = append(points, mp)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []string
	for _, mp := range points {
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
			errs = append(errs, fmt.Sprintf("%s: %v", mp, err))
		}
	}
	netns, _ := filepath.Glob("/run/netns/cni-*")
	for _, ns := range netns {
		_ = os.Remove(ns)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

var octalEscape = regexp.MustCompile(`\\[0-7]{3}`)

// unescapeMount decodes mountinfo's octal escapes (a space is \040).
func unescapeMount(s string) string {
	return octalEscape.ReplaceAllStringFunc(s, func(e string) string {
		n, _ := strconv.ParseUint(e[1:], 8, 8)
		return string(rune(n))
	})
}

// removeCgroups removes the kubepods cgroups, deepest first.
func removeCgroups() error {
	var errs []string
	for _, root := range kubepodsDirs() {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && err != syscall.ENOENT {
				errs = append(errs, fmt.Sprintf("%s: %v", dirs[i], err))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// restoreRules puts back the rules saved in dir (family is iptables or
// ip6tables): every table the node may have touched is replaced by its
// saved content, or emptied when it was empty then.
func restoreRules(dir, family string) error {
	saved, err := os.ReadFile(filepath.Join(dir, family+".rules"))
	if err != nil {
		if os.IsNotExist(err) {
			return nil // the node stopped before it saved them
		}
		return err
	}
	rules := string(saved)
	for _, t := range iptablesTables {
		if !strings.Contains(rules, "\n*"+t+"\n") && !strings.HasPrefix(rules, "*"+t+"\n") {
			rules += "*" + t + "\nCOMMIT\n"
		}
	}
	cmd := exec.Command(family + "-restore")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s-restore: %w: %s", family, err, out)
	}
	return nil
}
