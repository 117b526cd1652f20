package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api/workerenv"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/natscluster"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision/keyring"
	"github.com/tinyctl/tinyctl/render"
)

// installed is a runtime `tinyctl install` put into the test API server,
// run as the cluster would run it: nats-server from the broker chart's
// ConfigMap and the trust Secret, `tinyctl serve` with the controller
// Deployment's arguments and the signing key's Secret.
type installed struct {
	t         *testing.T
	admin     *user
	kubeArgs  []string
	ns        string
	url       string
	secrets   map[string]map[string][]byte
	publisher *user
	serve     *testenv.ServeProcess
	// monitor is the broker's monitoring endpoint (http://host:port).
	monitor string
	// oneAccount: the controller runs without namespace accounts, so
	// producers are minted in the control account (as tinyctl did before).
	oneAccount bool
}

// installWithJWT installs the runtime (broker auth jwt) to manage target.
func installWithJWT(t *testing.T, target string, extraServeArgs ...string) *installed {
	t.Helper()
	in := &installed{t: t, ns: "rt-" + strings.ToLower(rand.Text()[:8]), secrets: map[string]map[string][]byte{}}
	admin := &user{t: t, home: t.TempDir()}
	kubeArgs := []string{"--kubeconfig", kube.Kubeconfig, "--runtime-namespace", in.ns}
	in.admin, in.kubeArgs = admin, kubeArgs
	admin.must(append([]string{"install", "--namespaces", target, "--without-collector"}, kubeArgs...)...)
	t.Cleanup(func() { admin.run(append([]string{"uninstall"}, kubeArgs...)...) })
	ctx := context.Background()
	cs := kube.Clientset(t)
	for _, name := range []string{keyring.JWTSecret, keyring.SignerSecret, keyring.PublisherSecret} {
		s, err := cs.CoreV1().Secrets(in.ns).Get(ctx, name, metav1.GetOptions{})
		testenv.Must(t, err)
		in.secrets[name] = s.Data
	}
	in.url = in.startBroker()
	pubCreds := admin.file("publisher.creds", string(in.secrets[keyring.PublisherSecret][keyring.PublisherCredsKey]))
	in.publisher = &user{t: t, home: t.TempDir(), env: []string{
		"TINYCTL_NATS_URL=" + in.url, "TINYCTL_NATS_CREDS=" + pubCreds, "TINYCTL_NATS_CONTEXT=", "TINYCTL_REQUEST_TIMEOUT=10s",
	}}
	in.serve = in.startController(admin, extraServeArgs)
	return in
}

// startBroker runs a nats-server process from the installed broker's
// configuration and trust Secret, as the broker pod runs them: only the
// listen addresses (loopback, free ports) and the store (a directory of
// the test's) differ.
func (in *installed) startBroker() string {
	t := in.t
	cm, err := kube.Clientset(t).CoreV1().ConfigMaps(in.ns).Get(context.Background(), "nats-config", metav1.GetOptions{})
	testenv.Must(t, err)
	dir := t.TempDir()
	client, monitor, leaf := testenv.FreeAddr(t), testenv.FreeAddr(t), testenv.FreeAddr(t)
	conf := strings.NewReplacer(
		"listen: 0.0.0.0:4222", "listen: "+client,
		"http: 0.0.0.0:8222", "http: "+monitor,
		"listen: 0.0.0.0:7422", "listen: "+leaf,
		"store_dir: /data", "store_dir: "+filepath.Join(dir, "js"),
		"$SERVER_NAME", "nats-0",
	).Replace(cm.Data["nats.conf"])
	testenv.Must(t, os.WriteFile(filepath.Join(dir, "nats.conf"), []byte(conf), 0o600))
	// The trust configuration keeps account JWTs on the broker's volume;
	// here, in a directory of the test's.
	auth := bytes.ReplaceAll(in.secrets[keyring.JWTSecret][keyring.JWTKey], []byte(`"/data/jwt"`), fmt.Appendf(nil, "%q", filepath.Join(dir, "jwt")))
	testenv.Must(t, os.WriteFile(filepath.Join(dir, "auth.conf"), auth, 0o600))
	cmd := exec.Command(natscluster.BuildServer(t), "-c", filepath.Join(dir, "nats.conf"))
	logFile, err := os.Create(filepath.Join(dir, "nats-server.log"))
	testenv.Must(t, err)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	testenv.Must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logFile.Close() })
	in.monitor = "http://" + monitor
	testenv.Eventually(t, 20*time.Second, func() error {
		resp, err := http.Get(in.monitor + "/healthz")
		if err != nil {
			log, _ := os.ReadFile(logFile.Name())
			return fmt.Errorf("%v\n%s", err, log)
		}
		resp.Body.Close()
		return nil
	})
	return "nats://" + client
}

// startController runs `tinyctl serve` with the installed Deployment's
// arguments, the seed where the Secret volume puts it, and the test's
// broker address and ports.
func (in *installed) startController(admin *user, extra []string) *testenv.ServeProcess {
	t := in.t
	dep, err := kube.Clientset(t).AppsV1().Deployments(in.ns).Get(context.Background(), "tinyctl", metav1.GetOptions{})
	testenv.Must(t, err)
	signer := in.secrets[keyring.SignerSecret]
	seed := admin.file("seed", string(signer[keyring.SignerSeedKey]))
	operator := admin.file("operator-signing", string(signer[keyring.SignerOperatorKey]))
	claims := admin.file("claims.creds", string(signer[keyring.SignerClaimsKey]))
	var args []string
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		if a == "serve" || strings.HasPrefix(a, "--metrics-addr=") || strings.HasPrefix(a, "--health-addr=") {
			continue
		}
		args = append(args, a)
	}
	if !slices.Contains(args, "--nats-account-signing-key-file=/var/run/tinyctl/signer/seed") {
		t.Fatalf("the installed controller does not read the signing key: %v", args)
	}
	args = append(args, "--nats-url="+in.url, "--nats-account-signing-key-file="+seed,
		"--nats-operator-signing-key-file="+operator, "--nats-claims-creds="+claims,
		"--kubeconfig="+kube.Kubeconfig, "--lease-ttl=3s", "--recheck=500ms")
	p := testenv.Serve(t, binary, append(args, extra...)...)
	p.WaitReady(t, "leader", 30*time.Second)
	return p
}

// producer connects with credentials `tinyctl identity producer` minted
// for subjects of namespace ns into a Secret there, as a producer running
// in the cluster would mount them.
func (in *installed) producer(ns string, subjects ...string) *nats.Conn {
	t := in.t
	if in.oneAccount {
		s := in.secrets[keyring.SignerSecret]
		signer, err := identity.NewSigner(s[keyring.SignerSeedKey], string(s[keyring.SignerAccountKey]))
		testenv.Must(t, err)
		inbox := identity.ProducerInbox(ns, "client")
		c, err := signer.Mint("producer", identity.Producer(subjects, inbox), time.Now(), time.Hour)
		testenv.Must(t, err)
		nc, err := nats.Connect(in.url, nats.UserCredentials(writeFile(t, "producer.creds", c.File)), nats.CustomInboxPrefix(inbox))
		testenv.Must(t, err)
		t.Cleanup(nc.Close)
		return nc
	}
	args := append([]string{"identity", "producer", ns}, subjects...)
	r := in.admin.must(append(append(args, "--name", "client", "--secret", "client-producer"), in.kubeArgs...)...)
	if !strings.Contains(r.stdout, "Secret/"+ns+"/client-producer created") {
		t.Errorf("identity producer --secret: %s", r)
	}
	s, err := kube.Clientset(t).CoreV1().Secrets(ns).Get(context.Background(), "client-producer", metav1.GetOptions{})
	testenv.Must(t, err)
	inbox := string(s.Data[keyring.ProducerInboxKey])
	if inbox != "_INBOX_producer_"+ns+"_client" {
		t.Errorf("producer Secret's inbox prefix %q", inbox)
	}
	nc, err := nats.Connect(in.url, nats.UserCredentials(writeFile(t, "producer.creds", s.Data[keyring.ProducerCredsKey])), nats.CustomInboxPrefix(inbox))
	testenv.Must(t, err)
	t.Cleanup(nc.Close)
	return nc
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	testenv.Must(t, os.WriteFile(path, data, 0o600))
	return path
}

// worker is a client that runs as a component's worker would: with the
// Secret the controller wrote and the environment of its Deployment.
type worker struct {
	nc       *nats.Conn
	js       jetstream.JetStream
	env      map[string]string
	creds    string
	mu       sync.Mutex
	refusals []string
}

// startWorker waits for component name's credentials Secret and connects
// with them, reading the rest from its Deployment's environment.
func (in *installed) startWorker(ns, name string) *worker {
	t := in.t
	var sec *corev1.Secret
	testenv.Eventually(t, 30*time.Second, func() error {
		var err error
		sec, err = kube.Clientset(t).CoreV1().Secrets(ns).Get(context.Background(), render.CredentialsSecretName(name), metav1.GetOptions{})
		return err
	})
	d := deployment(t, ns, name, exists)
	w := &worker{env: map[string]string{}, creds: writeFile(t, "worker.creds", sec.Data[render.DefaultCredentialsKey])}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		w.env[e.Name] = e.Value
	}
	if w.env[workerenv.NATSCreds] == "" || w.env[workerenv.InboxPrefix] == "" {
		t.Fatalf("the Deployment gives the worker no credentials file or inbox prefix: %v", w.env)
	}
	nc, err := nats.Connect(in.url, nats.UserCredentials(w.creds), nats.CustomInboxPrefix(w.env[workerenv.InboxPrefix]),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.refusals = append(w.refusals, err.Error())
		}))
	if err != nil {
		t.Fatalf("worker %s cannot connect with its Secret's credentials: %v", name, err)
	}
	t.Cleanup(nc.Close)
	w.nc = nc
	w.js, err = jetstream.NewWithAPIPrefix(nc, cmp.Or(w.env[workerenv.JSAPIPrefix], "$JS.API"))
	testenv.Must(t, err)
	return w
}

// refused runs act and waits for the server's permission violation on
// subject.
func (w *worker) refused(t *testing.T, what, subject string, act func()) {
	t.Helper()
	act()
	testenv.Eventually(t, 5*time.Second, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, r := range w.refusals {
			if strings.Contains(r, `"`+subject+`"`) {
				return nil
			}
		}
		return fmt.Errorf("%s: no permission violation for %s (seen %v)", what, subject, w.refusals)
	})
}

func componentYAML(ns, name, subjects, publish string) string {
	return fmt.Sprintf(`apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: %s, namespace: %s}
spec:
  image: registry.example.com/acme/%s:1.0.0
  jobs:
    subjects: [%q]
    publish: [%s]
`, name, ns, name, subjects, publish)
}

// TestEachWorkerHoldsOnlyItsOwnIdentity is the least-privilege promise end
// to end on an installed runtime: a worker with the credentials its Secret
// holds fetches and acks its own jobs and nothing else; the publisher
// writes specs and nothing else; a deleted component's credentials stop
// working within their lifetime.
func TestEachWorkerHoldsOnlyItsOwnIdentity(t *testing.T) {
	target := kube.RestrictedNamespace(t)
	const ttl = 6 * time.Second
	in := installWithJWT(t, target, "--worker-credentials-ttl="+ttl.String())
	pub := in.publisher
	pub.must("apply", "-f", pub.file("resizer.yaml", componentYAML(target, "resizer", target+".resize.>", fmt.Sprintf("%q", target+".thumbs.>"))))
	pub.must("apply", "-f", pub.file("billing.yaml", componentYAML(target, "billing", target+".bill.>", "")))

	w := in.startWorker(target, "resizer")
	stream, consumer := w.env[workerenv.Stream], w.env[workerenv.Consumer]
	r := in.admin.run(append([]string{"identity", "producer", target, "other.resize.x"}, in.kubeArgs...)...)
	if r.code != exitUsage || !strings.Contains(r.stderr, `"other.resize.x" is outside the subjects namespace `+target+` may use`) {
		t.Errorf("a producer for another namespace's subject: %s", r)
	}
	producer := in.producer(target, target+".resize.>")
	ctx := testenv.Ctx(t, 30*time.Second)
	pjs, err := jetstream.New(producer)
	testenv.Must(t, err)
	if ack, err := pjs.Publish(ctx, target+".resize.one", []byte("job")); err != nil || ack.Stream != render.StreamName(target, "resizer") {
		t.Fatalf("the producer's job: ack %+v, %v", ack, err)
	}
	cons, err := w.js.Consumer(ctx, stream, consumer)
	testenv.Must(t, err)
	if got, err := natstest.FetchAndAck(t, ctx, cons, 1); got != 1 {
		t.Fatalf("the worker fetched %d jobs from its consumer (%v), want 1", got, err)
	}
	testenv.Must(t, w.nc.Publish(target+".thumbs.made", []byte("declared")))

	billing := "$JS.API.CONSUMER.MSG.NEXT." + render.StreamName(target, "billing") + "." + render.ConsumerName(target, "billing")
	w.refused(t, "another component's consumer", billing, func() {
		_ = w.nc.PublishRequest(billing, w.nc.NewRespInbox(), []byte("1"))
	})
	specKey := "$KV.tinyctl-components." + target + ".resizer"
	w.refused(t, "a put to the spec bucket", specKey, func() { _ = w.nc.Publish(specKey, []byte("{}")) })
	lease := "$KV.tinyctl-leases.controller." + render.DefaultClusterName
	w.refused(t, "the controller's lease", lease, func() { _ = w.nc.Publish(lease, []byte("{}")) })
	del := "$JS.API.STREAM.DELETE." + stream
	w.refused(t, "deleting its stream", del, func() { _ = w.nc.PublishRequest(del, w.nc.NewRespInbox(), nil) })
	w.refused(t, "an undeclared subject", target+".bill.forged", func() { _ = w.nc.Publish(target+".bill.forged", []byte("x")) })

	checkPublisherMayOnlyPublishSpecs(t, in, target, stream, consumer)

	// Delete the component: its Secret goes, and its credentials stop
	// connecting once they expire, at most ttl later.
	deleted := time.Now()
	pub.must("delete", "resizer", "-n", target, "--yes")
	testenv.Eventually(t, 30*time.Second, func() error {
		_, err := kube.Clientset(t).CoreV1().Secrets(target).Get(context.Background(), render.CredentialsSecretName("resizer"), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("credentials Secret still there (%v)", err)
	})
	testenv.Eventually(t, 3*ttl, func() error {
		nc, err := nats.Connect(in.url, nats.UserCredentials(w.creds))
		if err == nil {
			nc.Close()
			return fmt.Errorf("a deleted component's credentials still connect %s after the delete", time.Since(deleted).Round(time.Second))
		}
		return nil
	})
	took := time.Since(deleted)
	if took > ttl+5*time.Second {
		t.Errorf("credentials worked for %s after the delete, more than their %s lifetime", took, ttl)
	}
	t.Logf("a deleted component's credentials stopped connecting %s after the delete (lifetime %s)", took.Round(100*time.Millisecond), ttl)
}

// creds is the path of the credentials file u's commands use.
func (u *user) creds() string {
	var path string
	for _, e := range u.env {
		if v, ok := strings.CutPrefix(e, "TINYCTL_NATS_CREDS="); ok {
			path = v
		}
	}
	return path
}

// checkPublisherMayOnlyPublishSpecs: the publisher's identity can put a
// spec with a raw KV put, but fetch no job and touch no stream.
func checkPublisherMayOnlyPublishSpecs(t *testing.T, in *installed, target, stream, consumer string) {
	t.Helper()
	p := &worker{}
	nc, err := nats.Connect(in.url, nats.UserCredentials(in.publisher.creds()), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.refusals = append(p.refusals, err.Error())
	}))
	testenv.Must(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	testenv.Must(t, err)
	ctx := testenv.Ctx(t, 10*time.Second)
	kv, err := js.KeyValue(ctx, "tinyctl-components")
	testenv.Must(t, err)
	if _, err := kv.Put(ctx, target+".raw", []byte(componentYAML(target, "raw", target+".raw.>", ""))); err != nil {
		t.Errorf("the publisher cannot put a spec with a raw KV put: %v", err)
	}
	p.nc = nc
	next := "$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer
	p.refused(t, "publisher fetching jobs", next, func() { _ = nc.PublishRequest(next, nc.NewRespInbox(), []byte("1")) })
	del := "$JS.API.STREAM.DELETE." + stream
	p.refused(t, "publisher deleting a stream", del, func() { _ = nc.PublishRequest(del, nc.NewRespInbox(), nil) })
	p.refused(t, "publisher publishing a job", target+".resize.forged", func() { _ = nc.Publish(target+".resize.forged", []byte("x")) })
}
