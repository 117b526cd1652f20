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

// process is one running child: etcd or kube-apiserver.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // set before done is closed
}

// startProcess runs bin in its own process group with a parent-death signal,
// logging to <dir>/<name>.log, and records its process group in <dir>/pgids
// so a later run can reap it if this one dies without cleaning up.
func startProcess(dir, name, bin string, args ...string) (*process, error) {
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
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, fmt.Errorf("%s exited: %v", p.name, p.err)
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after stopGrace.
func (p *process) stop() {
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
		b, _ := os.ReadFile(filepath.Join(dir, "pgids"))
		for _, field := range strings.Fields(string(b)) {
			if pgid, err := strconv.Atoi(field); err == nil && isOurs(pgid) {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}
		_ = os.RemoveAll(dir)
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

// isOurs guards against pid reuse: only etcd and kube-apiserver are reaped.
func isOurs(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	exe := filepath.Base(strings.SplitN(string(b), "\x00", 2)[0])
	return exe == "etcd" || exe == "kube-apiserver"
}
