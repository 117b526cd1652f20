package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// runtimeNS is where a default install puts the runtime.
const runtimeNS = "tinyctl-system"

// user runs the tinyctl binary as someone at a terminal would, with
// KUBECONFIG and the NATS settings in the environment.
type user struct {
	t   *testing.T
	dir string
	env []string
}

func newUser(t *testing.T) *user {
	return &user{t: t, dir: t.TempDir(), env: []string{"KUBECONFIG=" + kube.Kubeconfig, "HOME=" + t.TempDir(), "NO_COLOR=1"}}
}

// result is what one command did.
type result struct {
	args           []string
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("tinyctl %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// run runs tinyctl with args, within limit, and fails the test on a
// secret in its output.
func (u *user) run(limit time.Duration, args ...string) result {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, tinyctlBin, args...)
	cmd.Env = append(os.Environ(), u.env...)
	cmd.Dir = u.dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{args: args, stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		u.t.Fatalf("tinyctl %v: %v", args, err)
	}
	testenv.NoSecrets(u.t, "tinyctl "+strings.Join(args, " "), r.stdout+r.stderr)
	return r
}

// ok runs tinyctl and fails the test unless it exits 0.
func (u *user) ok(limit time.Duration, args ...string) result {
	u.t.Helper()
	r := u.run(limit, args...)
	if r.code != 0 {
		u.t.Fatalf("%s", r)
	}
	return r
}

// file writes content into the user's directory and returns its path.
func (u *user) file(name, content string) string {
	u.t.Helper()
	p := filepath.Join(u.dir, name)
	testenv.Must(u.t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// read returns the content of a file in the user's directory.
func (u *user) read(name string) string {
	u.t.Helper()
	b, err := os.ReadFile(filepath.Join(u.dir, name))
	testenv.Must(u.t, err)
	return string(b)
}

// clientset is an admin client of the cluster.
func clientset(t *testing.T) *kubernetes.Clientset { return kube.Clientset(t) }

// secretData reads key of Secret ns/name.
func secretData(t *testing.T, ns, name, key string) []byte {
	t.Helper()
	s, err := clientset(t).CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
	testenv.Must(t, err)
	if len(s.Data[key]) == 0 {
		t.Fatalf("Secret %s/%s has no key %s", ns, name, key)
	}
	return s.Data[key]
}

// brokerURL is the broker's Service address as the host reaches it:
// kube-proxy routes its ClusterIP from the node too.
func brokerURL(t *testing.T) string {
	t.Helper()
	svc, err := clientset(t).CoreV1().Services(runtimeNS).Get(context.Background(), "nats", metav1.GetOptions{})
	testenv.Must(t, err)
	return "nats://" + svc.Spec.ClusterIP + ":4222"
}

// observer is a NATS connection for the test's own checks: a user allowed
// to read everything, which no party tinyctl hands out is.
type observer struct {
	nc *nats.Conn
	js jetstream.JetStream

	mu         sync.Mutex
	violations []string
}

// observeJobs connects as such a user of namespace ns's jobs account (the
// account holding its streams; minted with the keys the controller
// derives it from), where its streams' advisories are published too.
func observeJobs(t *testing.T, url, ns string) *observer {
	t.Helper()
	issuer, err := keyring.Issuer(context.Background(), clientset(t), runtimeNS)
	testenv.Must(t, err)
	n := issuer.Namespace(ns)
	c, err := signerOf(n.Jobs, n.JobsAccount()).Mint("e2e-observer", identity.Permissions{Publish: []string{">"}, Subscribe: []string{">"}}, time.Now(), time.Hour)
	testenv.Must(t, err)
	return connect(t, url, c.File, "")
}

// signerOf mints users of account with its own key.
func signerOf(key nkeys.KeyPair, account string) *identity.Signer {
	seed, _ := key.Seed()
	s, err := identity.NewSigner(seed, account)
	if err != nil {
		panic(err)
	}
	return s
}

// connect opens a connection with a creds file's content, the inbox
// prefix given ("" for the default) and a record of permission violations.
func connect(t *testing.T, url string, creds []byte, inbox string) *observer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "user.creds")
	testenv.Must(t, os.WriteFile(path, creds, 0o600))
	o := &observer{}
	opts := []nats.Option{nats.UserCredentials(path), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.violations = append(o.violations, err.Error())
	})}
	if inbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(inbox))
	}
	nc, err := nats.Connect(url, opts...)
	testenv.Must(t, err)
	t.Cleanup(nc.Close)
	o.nc = nc
	o.js, err = jetstream.New(nc)
	testenv.Must(t, err)
	return o
}

// refused waits until the server reports a permission violation for
// subject on this connection.
func (o *observer) refused(t *testing.T, subject string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() error {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, v := range o.violations {
			if strings.Contains(v, `"`+subject+`"`) {
				return nil
			}
		}
		return fmt.Errorf("no permission violation for %s (seen %v)", subject, o.violations)
	})
}

// podsReady waits until ns has exactly want pods matching selector, every
// one Running and Ready, and returns them.
func podsReady(t *testing.T, ns, selector string, want int, within time.Duration) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	testenv.EventuallyEvery(t, within, 500*time.Millisecond, func() error {
		list, err := clientset(t).CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		var ready []corev1.Pod
		var problems []string
		for _, p := range list.Items {
			if p.DeletionTimestamp != nil {
				problems = append(problems, p.Name+" terminating")
				continue
			}
			if isReady(p) {
				ready = append(ready, p)
				continue
			}
			problems = append(problems, fmt.Sprintf("%s %s %s", p.Name, p.Status.Phase, containerStates(p)))
		}
		if len(ready) != want || len(problems) > 0 {
			return fmt.Errorf("%s in %s: %d ready, want %d; %v", selector, ns, len(ready), want, problems)
		}
		pods = ready
		return nil
	})
	return pods
}

func isReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue && p.Status.Phase == corev1.PodRunning
		}
	}
	return false
}

func containerStates(p corev1.Pod) string {
	var out []string
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil:
			out = append(out, cs.Name+": "+cs.State.Waiting.Reason+" "+cs.State.Waiting.Message)
		case cs.State.Terminated != nil:
			out = append(out, fmt.Sprintf("%s: exited %d %s", cs.Name, cs.State.Terminated.ExitCode, cs.State.Terminated.Reason))
		}
	}
	return strings.Join(out, "; ")
}

// rolledOut waits until Deployment ns/name has observed its latest
// generation and runs want updated, ready pods and no others.
func rolledOut(t *testing.T, ns, name string, want int32, within time.Duration) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	testenv.EventuallyEvery(t, within, 500*time.Millisecond, func() error {
		var err error
		if d, err = clientset(t).AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		s := d.Status
		if s.ObservedGeneration != d.Generation || s.UpdatedReplicas != want || s.ReadyReplicas != want || s.Replicas != want {
			return fmt.Errorf("Deployment %s/%s: generation %d observed %d, replicas %d updated %d ready %d; want %d",
				ns, name, d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, want)
		}
		return nil
	})
	return d
}

// gone waits until get reports the object not found.
func gone(t *testing.T, what string, within time.Duration, get func() error) {
	t.Helper()
	testenv.Eventually(t, within, func() error {
		switch err := get(); {
		case apierrors.IsNotFound(err) || errors.Is(err, jetstream.ErrStreamNotFound):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("%s still exists", what)
	})
}

// readyz reads a controller's or a worker's /readyz from the host (pod
// addresses are routed to the node's bridge; both serve it on 8081).
func readyz(pod corev1.Pod) string { return httpGet(pod, 8081, "/readyz") }

// sumSeries adds up the samples of metric in a Prometheus text exposition.
func sumSeries(text, metric string) float64 {
	sum := 0.0
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, metric+"{") && !strings.HasPrefix(l, metric+" ") {
			continue
		}
		fields := strings.Fields(l)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// httpGet is what the pod answers on port at path, from the node (the
// kubelet's vantage point); an error's text when it does not answer.
func httpGet(pod corev1.Pod, port int, path string) string {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://%s:%d%s", pod.Status.PodIP, port, path))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return strings.TrimSpace(b.String())
}
