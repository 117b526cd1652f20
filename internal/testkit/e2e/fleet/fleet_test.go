package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/fleet"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

const ns = "media"

// cluster is one member of the test fleet: its NATS (a leaf of the hub
// through a cuttable proxy), its API server and its controller.
type cluster struct {
	name, labels string
	nats         *bus.Embedded
	link         *testenv.Proxy
	kube         *testenv.Kube
	kubeconfig   string
	serve        *testenv.ServeProcess
	logs         []string // output of its stopped controllers
}

func startHub(t testing.TB) *bus.Embedded {
	hub, err := bus.StartEmbedded(testenv.Ctx(t, 20*time.Second), bus.EmbeddedConfig{ServerName: "hub",
		JetStreamDomain: "hub", Port: -1, LeafnodePort: -1, StoreDir: t.TempDir()})
	testenv.Must(t, err)
	t.Cleanup(func() { _ = hub.Shutdown(context.Background()) })
	return hub
}

func startCluster(t *testing.T, hub *bus.Embedded, kube *testenv.Kube, name, labels string) *cluster {
	c := &cluster{name: name, labels: labels, kube: kube, kubeconfig: kube.Kubeconfig}
	c.link = testenv.StartProxy(t, strings.TrimPrefix(hub.LeafnodeURL(), "nats-leaf://"))
	var err error
	// One account here: the job subjects (all under the namespace) stay
	// local, as a jwt install's jobs accounts keep them, or the leafnode
	// would bring every member each job published at any of them.
	c.nats, err = bus.StartEmbedded(testenv.Ctx(t, 20*time.Second), bus.EmbeddedConfig{ServerName: name,
		JetStreamDomain: name, Port: -1, StoreDir: t.TempDir(),
		LeafRemotes: []bus.LeafRemote{{URLs: []string{"nats-leaf://" + c.link.Addr()}, LocalOnly: append(fleet.LocalOnly(fleet.Buckets{}), ns+".>")}}})
	testenv.Must(t, err)
	t.Cleanup(func() { _ = c.nats.Shutdown(context.Background()) })
	createNamespace(t, kube.Clientset(t), ns)
	return c
}

// start runs the cluster's controller with extra flags and waits until it
// leads.
func (c *cluster) start(t *testing.T, extra ...string) {
	if c.serve != nil {
		c.stop(t)
	}
	args := []string{"--nats-url", c.nats.ClientURL(), "--kubeconfig", c.kubeconfig, "--cluster-name", c.name,
		"--hub-domain", "hub", "--heartbeat-ttl", "3s", "--lease-ttl", "2s"}
	if c.labels != "" {
		args = append(args, "--cluster-labels", c.labels)
	}
	c.serve = testenv.Serve(t, binary, append(args, extra...)...)
	c.serve.WaitReady(t, "leader", 60*time.Second)
}

func (c *cluster) stop(t *testing.T) {
	_ = c.serve.Cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot die
	_ = c.serve.Cmd.Process.Kill()
	<-c.serve.Exited()
	c.logs = append(c.logs, c.serve.Output())
}

func createNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// tinyctl runs the CLI against the hub and returns its standard output.
func tinyctl(t *testing.T, hub *bus.Embedded, args ...string) string {
	t.Helper()
	out, stderr, err := tinyctlAt(t, hub, args...)
	if err != nil {
		t.Fatalf("tinyctl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return out
}

func component(t *testing.T, name, image, placement string) string {
	path := filepath.Join(t.TempDir(), name+".yaml")
	doc := fmt.Sprintf(`apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: %s, namespace: %s}
spec:
  image: %s
  jobs: {subjects: ["%s.%s.jobs"]}
%s`, name, ns, image, ns, name, placement)
	testenv.Must(t, os.WriteFile(path, []byte(doc), 0o600))
	return path
}

// image returns the image of the component's Deployment in kube, "" when
// it has none.
func image(t *testing.T, kube *testenv.Kube, name string) string {
	d, err := kube.Clientset(t).AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	testenv.Must(t, err)
	return d.Spec.Template.Spec.Containers[0].Image
}

func waitImage(t *testing.T, c *cluster, name, want string) {
	t.Helper()
	testenv.Eventually(t, 60*time.Second, func() error {
		if got := image(t, c.kube, name); got != want {
			return fmt.Errorf("%s: Deployment %s image %q, want %q", c.name, name, got, want)
		}
		return nil
	})
}

// statusItem is the part of `tinyctl status -o json` the test reads.
type statusItem struct {
	Name             string `json:"name"`
	Cluster          string `json:"cluster"`
	Ready            string `json:"ready"`
	Applied          string `json:"applied"`
	Reason           string `json:"reason"`
	ObservedRevision uint64 `json:"observedRevision"`
	LatestRevision   uint64 `json:"latestRevision"`
	Stale            bool   `json:"stale"`
}

func hubStatus(t *testing.T, hub *bus.Embedded) map[string]statusItem {
	var list struct{ Items []statusItem }
	testenv.Must(t, json.Unmarshal([]byte(tinyctl(t, hub, "status", "-A", "-o", "json")), &list))
	out := map[string]statusItem{}
	for _, it := range list.Items {
		out[it.Name+"@"+it.Cluster] = it
	}
	return out
}

func waitHubStatus(t *testing.T, hub *bus.Embedded, row string, ok func(statusItem) bool) {
	t.Helper()
	testenv.Eventually(t, 60*time.Second, func() error {
		it, found := hubStatus(t, hub)[row]
		if !found || !ok(it) {
			return fmt.Errorf("hub status of %s: %+v (found %v)", row, it, found)
		}
		return nil
	})
}

func TestPublishOnceAtTheHubEveryPlacedClusterConvergesAndReportsHome(t *testing.T) {
	hub := startHub(t)
	eu := startCluster(t, hub, kubes[0], "eu-1", "region=eu")
	us := startCluster(t, hub, kubes[1], "us-1", "region=us")
	tinyctl(t, hub, "fleet", "join", "eu-1")
	tinyctl(t, hub, "fleet", "join", "us-1")
	eu.start(t)
	us.start(t)

	// Published once at the hub: one component everywhere, one in eu only.
	tinyctl(t, hub, "apply", "-f", component(t, "resizer", "ghcr.io/acme/resizer:1", ""))
	tinyctl(t, hub, "apply", "-f", component(t, "gdpr-export", "ghcr.io/acme/export:1",
		"  placement: {clusterSelector: {matchLabels: {region: eu}}}"))
	waitImage(t, eu, "resizer", "ghcr.io/acme/resizer:1")
	waitImage(t, us, "resizer", "ghcr.io/acme/resizer:1")
	waitImage(t, eu, "gdpr-export", "ghcr.io/acme/export:1")
	if got := image(t, us.kube, "gdpr-export"); got != "" {
		t.Fatalf("us-1 runs gdpr-export (%s), placed in region=eu only", got)
	}
	for _, row := range []string{"resizer@eu-1", "resizer@us-1", "gdpr-export@eu-1"} {
		waitHubStatus(t, hub, row, upToDate)
	}
	checkQueuesAtTheHub(t, hub, eu, us)

	// eu-1's controller is paused while an update reaches its mirror, then
	// the link is cut: the controller applies it cut off, and the status it
	// writes can reach the hub only later.
	testenv.Must(t, eu.serve.Cmd.Process.Signal(syscall.SIGSTOP))
	rev2 := publish(t, hub, "resizer", "ghcr.io/acme/resizer:2", "")
	eu.waitMirror(t, "media.resizer", rev2)
	eu.link.Cut()
	testenv.Must(t, eu.serve.Cmd.Process.Signal(syscall.SIGCONT))
	waitImage(t, eu, "resizer", "ghcr.io/acme/resizer:2")

	// Cut off: two updates and a delete at the hub reach us-1 only, and
	// eu-1's rows at the hub turn stale within its heartbeat TTL (3s).
	publish(t, hub, "resizer", "ghcr.io/acme/resizer:3", "")
	rev4 := publish(t, hub, "resizer", "ghcr.io/acme/resizer:4", "")
	tinyctl(t, hub, "delete", "gdpr-export", "-n", ns, "--yes")
	waitImage(t, us, "resizer", "ghcr.io/acme/resizer:4")
	cut := time.Now()
	waitHubStatus(t, hub, "resizer@eu-1", func(it statusItem) bool { return it.Stale })
	t.Logf("eu-1's rows at the hub turned stale %s after the updates", time.Since(cut).Round(100*time.Millisecond))

	// Restarted while cut off, eu-1's controller keeps what it applied.
	eu.start(t)
	if got := image(t, eu.kube, "resizer"); got != "ghcr.io/acme/resizer:2" {
		t.Fatalf("eu-1 resizer image %q while cut off, want the last revision it had applied", got)
	}
	if got := image(t, eu.kube, "gdpr-export"); got == "" {
		t.Fatal("eu-1 deleted gdpr-export while cut off from the hub, before the delete reached it")
	}

	// The link is back (the controller paused, so nothing newer is written
	// yet): the status eu-1 wrote while cut off arrives at the hub.
	testenv.Must(t, eu.serve.Cmd.Process.Signal(syscall.SIGSTOP))
	eu.link.Restore()
	waitHubStatus(t, hub, "resizer@eu-1", func(it statusItem) bool { return it.ObservedRevision == rev2 })

	// Resumed, eu-1 converges: the latest revision, the delete lands.
	testenv.Must(t, eu.serve.Cmd.Process.Signal(syscall.SIGCONT))
	waitImage(t, eu, "resizer", "ghcr.io/acme/resizer:4")
	waitImage(t, eu, "gdpr-export", "")
	waitHubStatus(t, hub, "resizer@eu-1", func(it statusItem) bool { return upToDate(it) && it.ObservedRevision == rev4 })
	testenv.Eventually(t, 30*time.Second, func() error {
		if it, found := hubStatus(t, hub)["gdpr-export@eu-1"]; found {
			return fmt.Errorf("gdpr-export@eu-1 still reported at the hub: %+v", it)
		}
		return nil
	})
	if revs := eu.appliedRevisions("Deployment/media/resizer"); !slices.IsSorted(revs) {
		t.Errorf("eu-1 applied resizer revisions out of order: %v", revs)
	}

	// The clusters as the hub sees them.
	var clusters struct {
		Items []struct {
			Name     string
			Labels   map[string]string
			Placed   int
			Ready    int
			Degraded int
			Stale    bool
			Member   *fleet.Member
		}
	}
	testenv.Must(t, json.Unmarshal([]byte(tinyctl(t, hub, "clusters", "-o", "json")), &clusters))
	if len(clusters.Items) != 2 {
		t.Fatalf("clusters: %+v", clusters.Items)
	}
	for i, name := range []string{"eu-1", "us-1"} {
		got := clusters.Items[i]
		if got.Name != name || got.Placed != 1 || got.Ready != 0 || got.Degraded != 0 || got.Stale || got.Member == nil {
			t.Errorf("cluster %d: %+v, want %s with 1 placed (not ready: no pods run), none degraded, live, a member", i, got, name)
		}
	}
	table := tinyctl(t, hub, "clusters")
	if !strings.Contains(table, "region=eu") || !strings.Contains(table, "domain eu-1") {
		t.Errorf("clusters table:\n%s", table)
	}

	// A new revision placed on us-1 only removes resizer from eu-1.
	publish(t, hub, "resizer", "ghcr.io/acme/resizer:4", "  placement: {clusters: [us-1]}")
	waitImage(t, eu, "resizer", "")
	if got := image(t, us.kube, "resizer"); got != "ghcr.io/acme/resizer:4" {
		t.Errorf("us-1 resizer image %q after the placement change, want it kept", got)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if it, found := hubStatus(t, hub)["resizer@eu-1"]; found {
			return fmt.Errorf("resizer@eu-1 still reported at the hub after unplacing: %+v", it)
		}
		return nil
	})
}

func upToDate(it statusItem) bool {
	// Applied, not Ready: the members' API servers run no pods.
	return it.Applied == "True" && it.ObservedRevision == it.LatestRevision && !it.Stale
}

// publish applies a component at the hub and returns its revision.
func publish(t *testing.T, hub *bus.Embedded, name, image, placement string) uint64 {
	t.Helper()
	out := tinyctl(t, hub, "apply", "-f", component(t, name, image, placement))
	m := regexp.MustCompile(`\(revision (\d+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("apply printed no revision: %s", out)
	}
	rev, err := strconv.ParseUint(m[1], 10, 64)
	testenv.Must(t, err)
	return rev
}

// waitMirror waits until the cluster's mirror of the spec bucket holds
// revision rev of key (after a cut, nats-server retries the mirror with a
// backoff of up to 2 minutes).
func (c *cluster) waitMirror(t *testing.T, key string, rev uint64) {
	t.Helper()
	conn := natstest.BusConnect(t, bus.Config{URLs: []string{c.nats.ClientURL()}}, nil)
	ctx := testenv.Ctx(t, 160*time.Second)
	mirror, err := specs.Open(ctx, conn, specs.Config{}, kv.Existing)
	testenv.Must(t, err)
	testenv.Eventually(t, 150*time.Second, func() error {
		e, err := mirror.Get(ctx, key)
		if err != nil || e.Revision != rev {
			return fmt.Errorf("%s mirror: %s at %d (%v), want %d", c.name, key, e.Revision, err, rev)
		}
		return nil
	})
}

// appliedRevisions are the revisions of object the cluster's controllers
// logged as applied, in order, across restarts.
func (c *cluster) appliedRevisions(object string) []uint64 {
	var revs []uint64
	for _, out := range append(c.logs, c.serve.Output()) {
		for _, line := range strings.Split(out, "\n") {
			var l struct {
				Object, Message string
				Revision        uint64
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Object == object && l.Message == "applied" {
				revs = append(revs, l.Revision)
			}
		}
	}
	return revs
}

func TestAControllerRestartedWithoutItsLabelsDeletesNothingUntilTold(t *testing.T) {
	hub := startHub(t)
	eu := startCluster(t, hub, kubes[0], "eu-2", "region=eu")
	tinyctl(t, hub, "fleet", "join", "eu-2")
	eu.start(t)
	tinyctl(t, hub, "apply", "-f", component(t, "gdpr-audit", "ghcr.io/acme/audit:1",
		"  placement: {clusterSelector: {matchLabels: {region: eu}}}"))
	waitImage(t, eu, "gdpr-audit", "ghcr.io/acme/audit:1")

	// As after `tinyctl install` re-run without --cluster-labels.
	eu.labels = ""
	eu.start(t)
	waitHubStatus(t, hub, "gdpr-audit@eu-2", func(it statusItem) bool { return it.Reason == "UnplaceHeld" })
	if got := image(t, eu.kube, "gdpr-audit"); got == "" {
		t.Fatal("the controller without its labels deleted gdpr-audit")
	}

	// The operator confirms.
	eu.start(t, "--accept-unplace")
	testenv.Eventually(t, 60*time.Second, func() error {
		if got := image(t, eu.kube, "gdpr-audit"); got != "" {
			return fmt.Errorf("gdpr-audit still runs (%s) after --accept-unplace", got)
		}
		return nil
	})

	// The flag left on confirms nothing new: labels restored, a component
	// placed in the region, then the labels lost again.
	eu.labels = "region=eu"
	eu.start(t, "--accept-unplace")
	tinyctl(t, hub, "apply", "-f", component(t, "gdpr-retention", "ghcr.io/acme/retention:1",
		"  placement: {clusterSelector: {matchLabels: {region: eu}}}"))
	waitImage(t, eu, "gdpr-retention", "ghcr.io/acme/retention:1")
	eu.labels = ""
	eu.start(t, "--accept-unplace")
	waitHubStatus(t, hub, "gdpr-retention@eu-2", func(it statusItem) bool { return it.Reason == "UnplaceHeld" })
	if got := image(t, eu.kube, "gdpr-retention"); got == "" {
		t.Fatal("--accept-unplace left on removed gdpr-retention, whose hold arose after the controller started")
	}
}
