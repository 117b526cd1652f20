package serve_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

var (
	kube   *testenv.Kube
	binary string
)

func TestMain(m *testing.M) { testenv.RunWithKubeAndTinyctl(m, &kube, &binary) }

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// proc is one `tinyctl serve` process.
type proc struct {
	*testenv.ServeProcess
	t      *testing.T
	holder string
	health string
	metric string
	cmd    *exec.Cmd
	exited chan error
}

// startServe runs `tinyctl serve` against the test API server and NATS
// server, managing namespace ns, with a short lease.
func startServe(t *testing.T, natsURL, ns, holder string, extra ...string) *proc {
	t.Helper()
	args := append([]string{
		"--nats-url", natsURL, "--kubeconfig", kube.Kubeconfig,
		"--holder", holder, "--cluster-name", "test", "--namespaces", ns,
		"--lease-ttl", "3s", "--heartbeat-ttl", "3s", "--recheck", "500ms", "--shutdown-grace", "5s",
		"--log-format", "json"}, extra...)
	sp := testenv.Serve(t, binary, args...)
	p := &proc{ServeProcess: sp, t: t, holder: holder, health: sp.HealthAddr, metric: sp.MetricsAddr, cmd: sp.Cmd, exited: make(chan error, 1)}
	go func() { p.exited <- sp.ExitErr() }()
	return p
}

// get fetches a path from the health or metrics server.
func get(addr, path string) (int, string, error) { return testenv.HTTPGet(addr, path) }

// waitRole polls /readyz until it reports ready in role (leader or standby).
func (p *proc) waitRole(role string, within time.Duration) {
	p.t.Helper()
	p.WaitReady(p.t, role, within)
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
	nats  *natstest.Server
	specs *specs.Store
	ns    string
}

func newFixture(t *testing.T) *fixture {
	nats := natstest.Start(t)
	f := fixtureAt(t, nats.URL(), kube.RestrictedNamespace(t))
	f.nats = nats
	return f
}

// fixtureAt connects to a NATS server that is already running at url and
// publishes into namespace ns.
func fixtureAt(t *testing.T, url, ns string) *fixture {
	f := &fixture{t: t, ns: ns}
	conn, err := bus.Connect(context.Background(), bus.Config{URLs: []string{url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	if f.specs, err = specs.Open(context.Background(), conn, specs.Config{}, kv.Ensure); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) publish(name, image string) {
	f.t.Helper()
	c := api.Component{APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: name, Namespace: f.ns},
		Spec:     api.Spec{Image: image, Jobs: api.Jobs{Subjects: []string{f.ns + "." + name}}}}
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
