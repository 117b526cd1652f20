// Package natscluster runs a JetStream cluster of real nats-server
// processes for tests: each node has its own configuration file, client,
// route and monitoring ports on loopback and a store directory that
// survives a restart, so a test can SIGKILL a node and bring it back the
// way a crashed pod comes back with its volume. Every route runs through a
// proxy of its own, so a test can also cut a node off from the others (a
// network partition) and heal it. The server binary is built from the
// module's own nats-server/v2 dependency (BuildServer).
package natscluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// Name is the cluster's name in every node's cluster block.
const Name = "tinyctl-test"

// BuildServer compiles nats-server at the version go.mod requires into a
// temporary directory of tb and returns its path. Build it once per test
// and start every node from it.
func BuildServer(tb testing.TB) string {
	tb.Helper()
	path, err := Build(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// Build compiles nats-server at the version go.mod requires into dir and
// returns its path (for a TestMain, which has no testing.TB).
func Build(dir string) (string, error) {
	path := filepath.Join(dir, "nats-server")
	cmd := exec.Command("go", "build", "-o", path, "github.com/nats-io/nats-server/v2")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build nats-server: %w\n%s", err, out)
	}
	return path, nil
}

// Cluster is n nats-server processes routed to each other, JetStream on
// every one.
type Cluster struct {
	Nodes []*Node
	// links[i][j] carries the routes node i dials to node j.
	links [][]*testenv.Proxy
}

// Node is one server of a Cluster. Its ports and store stay the same
// across Kill and Start.
type Node struct {
	// Name is the node's server_name (n0, n1, ...).
	Name string
	// ClientURL is where clients connect; MonitorAddr serves /healthz.
	ClientURL, MonitorAddr string

	bin, conf string
	proc      *exec.Cmd
	exited    chan struct{}
	out       *testenv.SyncBuffer
}

// Start writes a configuration for each of n nodes, starts them all from
// binary bin and waits until every one reports healthy (JetStream
// current). Nodes still running when the test ends are killed; the output
// of every node is logged if the test failed.
func Start(tb testing.TB, bin string, n int) *Cluster {
	tb.Helper()
	dir := tb.TempDir()
	c := &Cluster{}
	clusterAddrs := make([]string, n)
	for i := range n {
		clusterAddrs[i] = testenv.FreeAddr(tb)
	}
	c.links = make([][]*testenv.Proxy, n)
	for i := range n {
		c.links[i] = make([]*testenv.Proxy, n)
		var routes []string
		for j := range n {
			if j != i {
				c.links[i][j] = testenv.StartProxy(tb, clusterAddrs[j])
				routes = append(routes, "nats-route://"+c.links[i][j].Addr())
			}
		}
		nd := &Node{Name: fmt.Sprintf("n%d", i), bin: bin, out: &testenv.SyncBuffer{},
			MonitorAddr: testenv.FreeAddr(tb)}
		client := testenv.FreeAddr(tb)
		nd.ClientURL = "nats://" + client
		nd.conf = filepath.Join(dir, nd.Name+".conf")
		conf := nodeConfig(nd.Name, client, nd.MonitorAddr, clusterAddrs[i], filepath.Join(dir, nd.Name), routes)
		if err := os.WriteFile(nd.conf, []byte(conf), 0o600); err != nil {
			tb.Fatal(err)
		}
		c.Nodes = append(c.Nodes, nd)
	}
	tb.Cleanup(func() {
		for _, nd := range c.Nodes {
			nd.Kill(tb)
			if tb.Failed() {
				tb.Logf("nats-server %s output (last 4 KiB):\n%s", nd.Name, tail(nd.out.String(), 4096))
			}
		}
	})
	for _, nd := range c.Nodes {
		nd.Start(tb)
	}
	for _, nd := range c.Nodes {
		testenv.Eventually(tb, 30*time.Second, nd.Healthy)
	}
	return c
}

// nodeConfig is one node's nats-server configuration.
func nodeConfig(name, client, monitor, cluster, store string, routes []string) string {
	return fmt.Sprintf(`server_name: %s
listen: %s
http: %s
jetstream {
  store_dir: %q
}
cluster {
  name: %s
  listen: %s
  # Routes only through the proxies: a node advertises no address of its
  # own that another could dial around them (gossiped and pooled routes
  # would bypass a partition).
  advertise: "127.0.0.1:1"
  routes: [
    %s
  ]
}
`, name, client, monitor, store, Name, cluster, strings.Join(routes, "\n    "))
}

// Isolate cuts node i off from every other node (each route in both
// directions closed, new ones refused) until Heal: a network partition
// with i alone on one side. Clients still reach every node. It returns how
// many route connections it closed.
func (c *Cluster) Isolate(i int) int {
	closed := 0
	for j := range c.Nodes {
		if j != i {
			closed += c.links[i][j].Cut() + c.links[j][i].Cut()
		}
	}
	return closed
}

// Heal ends Isolate(i).
func (c *Cluster) Heal(i int) {
	for j := range c.Nodes {
		if j != i {
			c.links[i][j].Restore()
			c.links[j][i].Restore()
		}
	}
}

// Routes returns how many routes the node has open (its /routez), so a
// test can confirm a partition landed.
func (nd *Node) Routes() (int, error) {
	code, body, err := testenv.HTTPGet(nd.MonitorAddr, "/routez")
	if err != nil || code != 200 {
		return 0, fmt.Errorf("%s /routez = %d: %v", nd.Name, code, err)
	}
	var rz struct {
		NumRoutes int `json:"num_routes"`
	}
	if err := json.Unmarshal([]byte(body), &rz); err != nil {
		return 0, fmt.Errorf("%s /routez: %w", nd.Name, err)
	}
	return rz.NumRoutes, nil
}

// Clients returns the names of the client connections the node holds
// (its /connz), so a test can tell which node a process is connected to.
func (nd *Node) Clients() ([]string, error) {
	code, body, err := testenv.HTTPGet(nd.MonitorAddr, "/connz?limit=1024")
	if err != nil || code != 200 {
		return nil, fmt.Errorf("%s /connz = %d: %v", nd.Name, code, err)
	}
	var cz struct {
		Connections []struct {
			Name string `json:"name"`
		} `json:"connections"`
	}
	if err := json.Unmarshal([]byte(body), &cz); err != nil {
		return nil, fmt.Errorf("%s /connz: %w", nd.Name, err)
	}
	names := make([]string, len(cz.Connections))
	for i, c := range cz.Connections {
		names[i] = c.Name
	}
	return names, nil
}

// URLs are the client URLs of every node.
func (c *Cluster) URLs() []string {
	urls := make([]string, len(c.Nodes))
	for i, nd := range c.Nodes {
		urls[i] = nd.ClientURL
	}
	return urls
}

// Start runs the node's server. It fails the test if the process cannot
// start; it does not wait for the node to be healthy (see Healthy).
func (nd *Node) Start(tb testing.TB) {
	tb.Helper()
	cmd := exec.Command(nd.bin, "-c", nd.conf)
	cmd.Stdout, cmd.Stderr = nd.out, nd.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start nats-server %s: %v", nd.Name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	nd.proc, nd.exited = cmd, exited
}

// Kill sends SIGKILL to the node's server, as a crash or an OOM kill
// would end it, and waits for it to exit. A node not running is left
// alone.
func (nd *Node) Kill(tb testing.TB) {
	tb.Helper()
	if nd.proc == nil {
		return
	}
	if err := nd.proc.Process.Signal(syscall.SIGKILL); err != nil && !isDone(nd.exited) {
		tb.Errorf("kill nats-server %s: %v", nd.Name, err)
	}
	<-nd.exited
	nd.proc = nil
}

// Healthy returns nil once the node's /healthz answers 200: the server
// runs and its JetStream, streams and consumers are current.
func (nd *Node) Healthy() error {
	code, body, err := testenv.HTTPGet(nd.MonitorAddr, "/healthz")
	if err != nil {
		return fmt.Errorf("%s: %w", nd.Name, err)
	}
	if code != 200 {
		return fmt.Errorf("%s /healthz = %d %s", nd.Name, code, strings.TrimSpace(body))
	}
	return nil
}

// Running reports whether the node's process is up.
func (nd *Node) Running() bool { return nd.proc != nil && !isDone(nd.exited) }

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
