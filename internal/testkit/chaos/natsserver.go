package chaos

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// NATSServer is a nats-server with JetStream run as a child process. Its
// ports and store directory stay the same across Kill and Start, so
// clients reconnect and JetStream state survives.
type NATSServer struct {
	bin, dir, addr, monitor, leaf string
	opts                          NATSOptions
	cmd                           *exec.Cmd
	exited                        chan struct{}
	// Starts counts how many times the process was started.
	Starts int
}

// StartNATS starts bin with JetStream on free loopback ports, its store
// in a test temp dir limited to maxStore bytes (0: 1 TiB), waits until it
// is healthy and kills it when the test ends. It fails the test when the
// server does not come up within 30s.
func StartNATS(tb testing.TB, bin string, maxStore int64) *NATSServer {
	return StartNATSWith(tb, bin, NATSOptions{MaxStore: maxStore})
}

// NATSOptions shape a server StartNATSWith starts.
type NATSOptions struct {
	// Name is the server's name ("chaos" when empty); Domain its
	// JetStream domain (none when empty).
	Name, Domain string
	// MaxStore limits the JetStream store (0: 1 TiB).
	MaxStore int64
	// Leafnodes makes the server accept leafnode connections (a hub),
	// on LeafAddr.
	Leafnodes bool
	// Hub, when set, is the host:port of a hub this server connects to
	// as a leafnode, sending it nothing under DenyExports. A server is a
	// hub or a leaf here, not both: each writes its own leafnodes block.
	Hub         string
	DenyExports []string
}

// StartNATSWith is StartNATS with a name, a JetStream domain and
// leafnodes.
func StartNATSWith(tb testing.TB, bin string, o NATSOptions) *NATSServer {
	tb.Helper()
	if o.MaxStore == 0 {
		o.MaxStore = 1 << 40
	}
	s := &NATSServer{bin: bin, dir: tb.TempDir(), opts: o}
	tb.Cleanup(func() { s.Kill(tb) })
	// A free port can be taken by another process between the moment it
	// is picked and the server's bind (a shared machine runs many): then
	// new ports are picked, a few times.
	for attempt := 1; ; attempt++ {
		s.addr, s.monitor = testenv.FreeAddr(tb), testenv.FreeAddr(tb)
		if o.Leafnodes {
			s.leaf = testenv.FreeAddr(tb)
		}
		testenv.Must(tb, os.WriteFile(filepath.Join(s.dir, "nats.conf"), []byte(s.config()), 0o600))
		err := s.tryStart(tb)
		if err == nil {
			return s
		}
		s.Kill(tb)
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			tb.Fatalf("start nats-server: %v", err)
		}
	}
}

func (s *NATSServer) config() string {
	host, port, _ := net.SplitHostPort(s.addr)
	mhost, mport, _ := net.SplitHostPort(s.monitor)
	o := s.opts
	domain := ""
	if o.Domain != "" {
		domain = fmt.Sprintf("  domain: %q\n", o.Domain)
	}
	conf := fmt.Sprintf(`server_name: %q
host: %s
port: %s
http: "%s:%s"
jetstream {
  store_dir: %q
  max_file_store: %d
  max_memory_store: 268435456
%s}
`, cmp.Or(o.Name, "chaos"), host, port, mhost, mport, filepath.Join(s.dir, "store"), o.MaxStore, domain)
	if o.Leafnodes {
		conf += fmt.Sprintf("leafnodes { listen: %q, no_advertise: true }\n", s.leaf)
	}
	if o.Hub != "" {
		deny := make([]string, len(o.DenyExports))
		for i, d := range o.DenyExports {
			deny[i] = strconv.Quote(d)
		}
		conf += fmt.Sprintf("leafnodes { remotes: [ { urls: [%q], deny_exports: [%s] } ] }\n", "nats-leaf://"+o.Hub, strings.Join(deny, ", "))
	}
	return conf
}

// LeafAddr is the host:port leafnodes connect to ("" unless
// NATSOptions.Leafnodes).
func (s *NATSServer) LeafAddr() string { return s.leaf }

// URL is the client URL.
func (s *NATSServer) URL() string { return "nats://" + s.addr }

// Addr is the client host:port.
func (s *NATSServer) Addr() string { return s.addr }

// Start runs the server (again) and waits until its JetStream is healthy.
func (s *NATSServer) Start(tb testing.TB) {
	tb.Helper()
	if err := s.tryStart(tb); err != nil {
		tb.Fatalf("start nats-server: %v", err)
	}
}

// tryStart runs the server and waits up to 30 s until its JetStream is
// healthy, returning why not otherwise.
func (s *NATSServer) tryStart(tb testing.TB) error {
	tb.Helper()
	s.cmd = exec.Command(s.bin, "-c", filepath.Join(s.dir, "nats.conf"))
	log, err := os.OpenFile(filepath.Join(s.dir, "nats.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	testenv.Must(tb, err)
	defer log.Close()
	s.cmd.Stdout, s.cmd.Stderr = log, log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	testenv.Must(tb, s.cmd.Start())
	s.Starts++
	exited := make(chan struct{})
	s.exited = exited
	go func() { _ = s.cmd.Wait(); close(exited) }()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := s.healthy()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return s.healthy() // says it exited, with the log's tail
		case <-deadline:
			return err
		case <-tick.C:
		}
	}
}

// healthy asks the monitoring port whether JetStream is up.
func (s *NATSServer) healthy() error {
	select {
	case <-s.exited:
		return fmt.Errorf("nats-server exited:\n%s", s.LogTail())
	default:
	}
	code, body, err := testenv.HTTPGet(s.monitor, "/healthz")
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("nats-server /healthz = %d %s", code, strings.TrimSpace(body))
	}
	return nil
}

// Kill SIGKILLs the server and waits until it is gone, and reports
// whether it killed a running server; a server that is not running is
// left alone.
func (s *NATSServer) Kill(tb testing.TB) bool {
	tb.Helper()
	if s.cmd == nil {
		return false
	}
	killed := false
	select {
	case <-s.exited:
	default:
		killed = s.cmd.Process.Kill() == nil
		<-s.exited
	}
	s.cmd = nil
	return killed
}

// LogTail returns the last lines the server logged.
func (s *NATSServer) LogTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "nats.log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
