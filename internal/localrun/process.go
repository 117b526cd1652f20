package localrun

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// Process is a running local worker.
type Process struct {
	name       string
	cmd        *exec.Cmd
	stopSignal syscall.Signal
	done       chan struct{}
	err        error // set before done is closed
}

// Command says what to run: argv, its environment and working directory
// (empty: this process's), the name that prefixes its output lines, and
// the signal Stop sends (zero: SIGTERM, what Kubernetes sends a pod).
type Command struct {
	Name       string
	Argv       []string
	Env        []string
	Dir        string
	StopSignal syscall.Signal
}

// Start runs c in a process group of its own (so that stopping a `go run`
// also stops the program it built) and copies each line it prints, on
// stdout or stderr, to out as "<name> | <line>" with one Write (out must
// take concurrent writes when processes share it). It fails
// when the program cannot be started.
func Start(c Command, out io.Writer) (*Process, error) {
	if len(c.Argv) == 0 {
		return nil, fmt.Errorf("local worker %s: no command", c.Name)
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("local worker %s: start %q: %w", c.Name, c.Argv[0], err)
	}
	p := &Process{name: c.Name, cmd: cmd, done: make(chan struct{}), stopSignal: c.StopSignal}
	if p.stopSignal == 0 {
		p.stopSignal = syscall.SIGTERM
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		prefixLines(pr, out, c.Name+" | ")
	}()
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		<-copied
		close(p.done)
	}()
	return p, nil
}

// prefixLines copies r to w line by line, each line behind prefix.
func prefixLines(r io.Reader, w io.Writer, prefix string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		_, _ = io.WriteString(w, prefix+sc.Text()+"\n")
	}
	_, _ = io.Copy(io.Discard, r) // a line too long ends the scan: keep the pipe flowing
}

// Pid is the process id of the started program, which is also its
// process group's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and its output is copied.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process exited (nil: status 0), once Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Stop sends the stop signal to the process group and waits for the
// process to exit; after grace it sends SIGKILL. It returns how the
// process exited.
func (p *Process) Stop(grace time.Duration) error {
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, p.stopSignal); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("local worker %s: %v: %w", p.name, p.stopSignal, err)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	return p.err
}
