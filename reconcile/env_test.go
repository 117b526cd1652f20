package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/serve/wire"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/deploy"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

var kube *testenv.Kube

func TestMain(m *testing.M) { testenv.RunWithKube(m, &kube) }

var (
	deployments     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	networkPolicies = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	scaledObjects   = schema.GroupVersionResource{Group: "keda.sh", Version: "v1alpha1", Resource: "scaledobjects"}
)

// env is one controller on its own NATS server and namespace.
type env struct {
	t        testing.TB
	nats     *natstest.Server
	conn     *bus.Conn
	js       jetstream.JetStream
	specs    *specs.Store
	statuses *status.Store
	dyn      dynamic.Interface
	ns       string
	cfg      reconcile.Config
	// kubeConfig is who the controller is in Kubernetes (default the
	// test API server's administrator).
	kubeConfig *rest.Config
	obs        reconcile.Observer
	minter     reconcile.Minter
	// specsOf, when set, wraps the spec bucket the controller reads.
	specsOf func(reconcile.Specs) reconcile.Specs
	// streamsOf, when set, wraps the JetStream provisioner.
	streamsOf func(reconcile.Streams) reconcile.Streams
	ctrl      *reconcile.Controller
	stop      context.CancelFunc
	done      chan error
}

func newEnv(t testing.TB, cfg reconcile.Config) *env {
	t.Helper()
	e := &env{t: t, nats: natstest.Start(t), ns: kube.RestrictedNamespace(t), cfg: cfg}
	ctx := context.Background()
	var err error
	e.conn, err = bus.Connect(ctx, bus.Config{URLs: []string{e.nats.URL()}, Name: t.Name()}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(e.conn.Close)
	e.js = e.conn.JetStream()
	if e.specs, err = specs.Open(ctx, e.conn, specs.Config{}, kv.Ensure); err != nil {
		t.Fatalf("spec store: %v", err)
	}
	if e.statuses, err = status.Open(ctx, e.conn, status.Config{}, kv.Ensure); err != nil {
		t.Fatalf("status store: %v", err)
	}
	e.dyn, _ = kube.Dynamic(t)
	if e.cfg.Cluster.Name == "" {
		e.cfg.Cluster.Name = "test"
	}
	if e.cfg.Namespaces == nil {
		e.cfg.Namespaces = []string{e.ns}
	}
	if e.cfg.Recheck == 0 {
		e.cfg.Recheck = 200 * time.Millisecond
	}
	return e
}

// start runs a controller until the test ends (or e.halt).
func (e *env) start() {
	e.t.Helper()
	cfg := e.kubeConfig
	if cfg == nil {
		cfg = kube.Config
	}
	a, err := apply.New(cfg, render.AnnotationContentHash)
	if err != nil {
		e.t.Fatal(err)
	}
	deps, err := wire.Deps(e.specs, e.statuses, streams.New(e.conn, 0), a, cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	deps.Observer = e.obs
	deps.Minter = e.minter
	if e.specsOf != nil {
		deps.Specs = e.specsOf(deps.Specs)
	}
	if e.streamsOf != nil {
		deps.Streams = e.streamsOf(deps.Streams)
	}
	e.ctrl = reconcile.New(e.cfg, deps)
	ctx, cancel := context.WithCancel(context.Background())
	ctx = zerolog.New(zerolog.NewTestWriter(e.t)).Level(logLevel()).WithContext(ctx)
	e.stop, e.done = cancel, make(chan error, 1)
	go func() { e.done <- e.ctrl.Run(ctx) }()
	e.t.Cleanup(e.halt)
	testenv.Eventually(e.t, 30*time.Second, func() error {
		if !e.ctrl.Ready() {
			return errors.New("controller not ready")
		}
		return nil
	})
}

// halt stops the controller and waits for Run to return.
func (e *env) halt() {
	if e.stop == nil {
		return
	}
	e.stop()
	if err := <-e.done; err != nil {
		e.t.Errorf("controller Run: %v", err)
	}
	e.stop = nil
}

func logLevel() zerolog.Level {
	if os.Getenv("TINYCTL_TEST_LOG") != "" {
		return zerolog.DebugLevel
	}
	return zerolog.WarnLevel
}

// component returns a valid component named name in the env's namespace
// (or the one mutate moves it to), binding subjects under its namespace.
func (e *env) component(name string, mutate ...func(*api.Component)) api.Component {
	c := api.Component{
		APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: name, Namespace: e.ns},
		Spec: api.Spec{
			Image: "registry.example.com/acme/" + name + ":1.0.0",
			Jobs:  api.Jobs{Subjects: []string{e.ns + "." + name + ".>"}},
		},
	}
	for _, m := range mutate {
		m(&c)
	}
	if ns := c.Metadata.Namespace; ns != e.ns && c.Spec.Jobs.Subjects[0] == e.ns+"."+name+".>" {
		c.Spec.Jobs.Subjects[0] = ns + "." + name + ".>"
	}
	return c
}

// publish puts c's canonical JSON and returns the revision.
func (e *env) publish(c api.Component) uint64 {
	e.t.Helper()
	b, err := api.Canonical(c)
	if err != nil {
		e.t.Fatal(err)
	}
	rev, err := e.specs.Put(context.Background(), api.KeyOf(defaults.Apply(c)), b)
	if err != nil {
		e.t.Fatalf("publish: %v", err)
	}
	return rev
}

// get returns a live object, or nil when it does not exist.
func (e *env) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	e.t.Helper()
	obj, err := e.dyn.Resource(gvr).Namespace(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatalf("get %s/%s: %v", gvr.Resource, name, err)
	}
	return obj
}

// waitFor polls until the object exists and check accepts it.
func (e *env) waitFor(gvr schema.GroupVersionResource, name string, check func(*unstructured.Unstructured) error) *unstructured.Unstructured {
	e.t.Helper()
	var obj *unstructured.Unstructured
	testenv.Eventually(e.t, 30*time.Second, func() error {
		obj = e.get(gvr, name)
		if obj == nil {
			return fmt.Errorf("%s/%s does not exist", gvr.Resource, name)
		}
		if check != nil {
			return check(obj)
		}
		return nil
	})
	return obj
}

// waitGone polls until the object no longer exists.
func (e *env) waitGone(gvr schema.GroupVersionResource, name string) {
	e.t.Helper()
	testenv.Eventually(e.t, 30*time.Second, func() error {
		if e.get(gvr, name) != nil {
			return fmt.Errorf("%s/%s still exists", gvr.Resource, name)
		}
		return nil
	})
}

// status returns the status record of component name in this cluster.
func (e *env) status(name string) (status.Record, error) {
	return e.statuses.Get(context.Background(), api.Key(e.ns, name), e.cfg.Cluster.Name)
}

// waitStatus polls until the status of name has a condition typ=want.
func (e *env) waitStatus(name, typ, want string, rev uint64) status.Record {
	e.t.Helper()
	return e.waitStatusIn(e.ns, name, typ, want, rev)
}

// waitStatusIn is waitStatus for a component in namespace ns.
func (e *env) waitStatusIn(ns, name, typ, want string, rev uint64) status.Record {
	e.t.Helper()
	var rec status.Record
	testenv.Eventually(e.t, 30*time.Second, func() error {
		var err error
		if rec, err = e.statuses.Get(context.Background(), api.Key(ns, name), e.cfg.Cluster.Name); err != nil {
			return err
		}
		if rev != 0 && rec.ObservedRevision != rev {
			return fmt.Errorf("observed revision %d, want %d", rec.ObservedRevision, rev)
		}
		for _, c := range rec.Conditions {
			if c.Type == typ && string(c.Status) == want {
				return nil
			}
		}
		return fmt.Errorf("no condition %s=%s in %+v", typ, want, rec.Conditions)
	})
	return rec
}

// stream returns the live stream info, or nil when it does not exist.
func (e *env) stream(name string) *jetstream.StreamInfo {
	e.t.Helper()
	s, err := e.js.Stream(context.Background(), render.StreamName(e.ns, name))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		e.t.Fatalf("stream: %v", err)
	}
	return s.CachedInfo()
}

// withScaledObjectCRD installs the ScaledObject CRD for the test.
func withScaledObjectCRD(t *testing.T) { kube.ApplyCRD(t, deploy.ScaledObjectCRD) }

// crdInstalled reports whether the ScaledObject CRD is served.
func crdInstalled(t *testing.T) bool {
	t.Helper()
	dc := discovery.NewDiscoveryClientForConfigOrDie(kube.Config)
	_, err := dc.ServerResourcesForGroupVersion("keda.sh/v1alpha1")
	return err == nil
}
