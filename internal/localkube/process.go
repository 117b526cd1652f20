package localkube

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a child gets to exit after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// Process is one running child: etcd, kube-apiserver, or a part of a node.
type Process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // set before done is closed
}

// StartProcess runs bin in its own process group with a parent-death signal,
// logging to <dir>/<name>.log, and records its process group in <dir>/pgids
// so a later run can reap it if this one dies without cleaning up (only
// binaries named in reapable are reaped).
func StartProcess(dir, name, bin string, args ...string) (*Process, error) {
	logf, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := recordPGID(dir, cmd.Process.Pid); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	p := &Process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// Name is the name the process was started with (its log is <name>.log).
func (p *Process) Name() string { return p.name }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, fmt.Errorf("%s exited: %v", p.name, p.err)
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after stopGrace,
// and returns once the process has exited.
func (p *Process) Stop() {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

func recordPGID(dir string, pgid int) error {
	f, err := os.OpenFile(filepath.Join(dir, "pgids"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, pgid)
	return err
}

// stateRoot holds one directory per running control plane, named
// run-<owner pid>-<random>.
func stateRoot() string { return filepath.Join(os.TempDir(), "tinyctl-localkube") }

// reapStale kills the children of control planes whose owning process is
// gone (a test binary killed before its cleanup ran) and removes their state.
func reapStale() {
	entries, _ := os.ReadDir(stateRoot())
	for _, e := range entries {
		owner, ok := ownerPID(e.Name())
		if !ok || alive(owner) {
			continue
		}
		dir := filepath.Join(stateRoot(), e.Name())
		KillRecorded(dir)
		_ = os.RemoveAll(dir)
	}
}

// KillRecorded kills the process groups StartProcess recorded in dir, for
// a run that died before stopping them. Only reapable binaries are killed
// (a recorded pid may have been reused since).
func KillRecorded(dir string) {
	b, _ := os.ReadFile(filepath.Join(dir, "pgids"))
	for _, field := range strings.Fields(string(b)) {
		if pgid, err := strconv.Atoi(field); err == nil && isOurs(pgid) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
}

func ownerPID(name string) (int, bool) {
	parts := strings.Split(name, "-")
	if len(parts) < 3 || parts[0] != "run" {
		return 0, false
	}
	pid, err := strconv.Atoi(parts[1])
	return pid, err == nil
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// reapable are the binaries a later run may kill when the run that started
// them died: isOurs guards against pid reuse with it.
var reapable = map[string]bool{
	"etcd": true, "kube-apiserver": true,
	"containerd": true, "kubelet": true, "kube-controller-manager": true, "kube-scheduler": true, "kube-proxy": true,
}

func isOurs(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return reapable[filepath.Base(strings.SplitN(string(b), "\x00", 2)[0])]
}

// LogTail returns the last lines of the log StartProcess wrote for name in
// dir, headed by the name, for error messages; "" when there is none.
func LogTail(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name+".log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return name + " log (last lines):\n" + strings.Join(lines, "\n")
}
