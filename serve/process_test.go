package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testenv"
)

var (
	kube   *testenv.Kube
	binary string
)

func TestMain(m *testing.M) { testenv.RunWithKubeAndTinyctl(m, &kube, &binary) }

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// proc is one `tinyctl serve` process.
type proc struct {
	t      *testing.T
	holder string
	health string
	metric string
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServe runs `tinyctl serve` against the test API server and NATS
// server, managing namespace ns, with a short lease.
func startServe(t *testing.T, natsURL, ns, holder string, extra ...string) *proc {
	t.Helper()
	p := &proc{t: t, holder: holder, health: freeAddr(t), metric: freeAddr(t), out: &syncBuffer{}, exited: make(chan error, 1)}
	args := append([]string{"serve",
		"--nats-url", natsURL, "--nats-context", "", "--kubeconfig", kube.Kubeconfig,
		"--holder", holder, "--cluster-name", "test", "--namespaces", ns,
		"--health-addr", p.health, "--metrics-addr", p.metric,
		"--lease-ttl", "3s", "--heartbeat-ttl", "3s", "--recheck", "500ms", "--shutdown-grace", "5s",
		"--log-format", "json"}, extra...)
	p.cmd = exec.Command(binary, args...)
	p.cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("%s output:\n%s", holder, p.out.String())
		}
	})
	return p
}

// get fetches a path from the health or metrics server.
func get(addr, path string) (int, string, error) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// waitRole polls /readyz until it reports ready in role (leader or standby).
func (p *proc) waitRole(role string, within time.Duration) {
	p.t.Helper()
	testenv.Eventually(p.t, within, func() error {
		code, body, err := get(p.health, "/readyz")
		if err != nil {
			return err
		}
		if code != http.StatusOK || !strings.Contains(body, role) {
			return fmt.Errorf("%s /readyz = %d %q, want ready (%s)", p.holder, code, strings.TrimSpace(body), role)
		}
		return nil
	})
}

// writes counts the persisted API writes this process made since mark.
func (p *proc) writes(mark int64) int {
	return len(kube.Writes(p.t, mark, func(e testenv.AuditEvent) bool {
		return strings.HasPrefix(e.UserAgent, "tinyctl-serve/"+p.holder) && e.ResponseStatus.Code < 300
	}))
}

// fixture is a NATS server with a spec store and a namespace.
type fixture struct {
	t     *testing.T
	nats  *testenv.NATSServer
	specs *bus.SpecStore
	ns    string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, nats: testenv.NATS(t), ns: kube.RestrictedNamespace(t)}
	conn, err := bus.Connect(context.Background(), bus.Config{URLs: []string{f.nats.URL()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	if f.specs, err = bus.OpenSpecStore(context.Background(), conn, bus.DefaultSpecBucketConfig()); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) publish(name, image string) {
	f.t.Helper()
	c := api.Component{APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: name, Namespace: f.ns},
		Spec:     api.Spec{Image: image, Jobs: api.Jobs{Subjects: []string{"jobs." + f.ns + "." + name}}}}
	b, err := api.Canonical(c)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.specs.Put(context.Background(), api.Key(f.ns, name), b); err != nil {
		f.t.Fatal(err)
	}
}

// waitImage polls until Deployment name runs image.
func (f *fixture) waitImage(name, image string) {
	f.t.Helper()
	dc, _ := kube.Dynamic(f.t)
	testenv.Eventually(f.t, 30*time.Second, func() error {
		d, err := dc.Resource(deployments).Namespace(f.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !strings.Contains(fmt.Sprint(d.Object["spec"]), image) {
			return fmt.Errorf("deployment %s does not run %s yet", name, image)
		}
		return nil
	})
}
