package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/localnode"
	"github.com/tinyctl/tinyctl/internal/statusview"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// The component the test publishes: the example worker, two pods, its
// stream deleted with it.
const (
	workerNS       = "default"
	workerName     = "thumbnailer"
	workerStream   = "tinyctl_default_thumbnailer"
	workerConsumer = "tinyctl_default_thumbnailer_worker"
	controllerSA   = "system:serviceaccount:" + runtimeNS + ":tinyctl"
)

func thumbnailer(work string, replicas int) string {
	return fmt.Sprintf(`apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata:
  name: %s
  namespace: %s
spec:
  image: %s
  env:
    - name: THUMBNAIL_WORK
      value: %s
  resources:
    requests: {cpu: 20m, memory: 32Mi}
    limits: {memory: 128Mi}
  jobs:
    subjects: ["default.thumbnail.*"]
    consumer: {maxDeliver: 3}
  replicas: %d
  probes: {worker: true}
  metricsPort: 9464
  egress: none
  deletion: {stream: Delete}
`, workerName, workerNS, localnode.ExampleWorkerImage, work, replicas)
}

// deadLettering turns on spec.jobs.deadLetter in a thumbnailer spec and
// makes its pods publish each result to default.thumbnailed, a subject
// their credentials may publish to but no stream takes: every job fails
// until its deliveries are used up.
func deadLettering(spec string) string {
	for _, edit := range [][2]string{
		{"    consumer: {maxDeliver: 3}\n", "    consumer: {maxDeliver: 3}\n    deadLetter: true\n    publish: [\"default.thumbnailed\"]\n"},
		{"  resources:\n", "    - name: THUMBNAIL_RESULTS\n      value: default.thumbnailed\n  resources:\n"},
	} {
		if !strings.Contains(spec, edit[0]) {
			panic("deadLettering: the thumbnailer spec no longer has " + strings.TrimSpace(edit[0]))
		}
		spec = strings.Replace(spec, edit[0], edit[1], 1)
	}
	return spec
}

// TestDefaultInstallRunsJobsOnARealNode is a new user's first hour, on a
// real node: install with the defaults, publish the example worker with
// the publisher's credentials, produce jobs with a producer's, watch the
// worker pods process them, update, lose the leading controller, diff,
// delete. Each step checks what a user would see: pods, the stream and
// its consumer, status in KV, the CLI's output.
func TestDefaultInstallRunsJobsOnARealNode(t *testing.T) {
	u := newUser(t)
	ctx := context.Background()
	cs := clientset(t)

	// A namespace that enforces the restricted Pod Security Standard: a
	// worker pod that violated it would never be created.
	ns, err := cs.CoreV1().Namespaces().Get(ctx, workerNS, metav1.GetOptions{})
	testenv.Must(t, err)
	ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	_, err = cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	testenv.Must(t, err)

	// 1. Install with the defaults; the node has no StorageClass, so the
	// broker's store goes to an emptyDir, with a warning.
	r := u.ok(5*time.Minute, "install", "--wait", "--timeout", "3m")
	// The cluster's ranges, which internet egress excludes, come from the
	// node's spec.podCIDR and the ServiceCIDR the API server made.
	for _, want := range []string{"Cluster network (found in the cluster): pods " + localnode.PodCIDR + ", Services 10.0.0.0/24",
		"Release/tinyctl-system/nats created", "Release/tinyctl-system/collector created", "Release/tinyctl-system/tinyctl created", "Done:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("install output lacks %q:\n%s", want, r)
		}
	}
	if !strings.Contains(r.stderr, "Warning: broker storage: emptyDir: the cluster has no default StorageClass") {
		t.Errorf("install did not warn that the broker's store is an emptyDir:\n%s", r)
	}
	if strings.Contains(r.stderr, "would violate PodSecurity") {
		t.Errorf("the API server warned about Pod Security:\n%s", r.stderr)
	}
	podsReady(t, runtimeNS, "app.kubernetes.io/name=nats", 1, time.Minute)
	podsReady(t, runtimeNS, "app.kubernetes.io/name=collector", 1, time.Minute)
	controllers := podsReady(t, runtimeNS, "app.kubernetes.io/name=tinyctl", 2, time.Minute)
	args := strings.Join(controllers[0].Spec.Containers[0].Args, " ")
	for _, want := range []string{"--pod-cidrs=" + localnode.PodCIDR, "--service-cidrs=10.0.0.0/24"} {
		if !strings.Contains(args, want) {
			t.Errorf("controller args lack %s: %s", want, args)
		}
	}
	// Go's runtime in each controller collects at serve's GC target and
	// holds a soft limit of 90% of its container's memory limit, read from
	// the cgroup the kubelet made (--memory-limit auto).
	for _, p := range controllers {
		limit := p.Spec.Containers[0].Resources.Limits.Memory().Value()
		text := httpGet(p, 9090, "/metrics")
		if got, want := sumSeries(text, "go_gc_gomemlimit_bytes"), float64(int64(float64(limit)*0.9)); limit == 0 || got != want {
			t.Errorf("controller %s: go_gc_gomemlimit_bytes %v, want %v (90%% of its container's limit %d)", p.Name, got, want, limit)
		}
		if got := sumSeries(text, "go_gc_gogc_percent"); got != 50 {
			t.Errorf("controller %s: go_gc_gogc_percent %v, want serve's default 50", p.Name, got)
		}
	}

	// A second install changes nothing.
	r = u.ok(3*time.Minute, "install")
	if !strings.Contains(r.stdout, "Done:") || strings.Contains(r.stdout, " created") || strings.Contains(r.stdout, " upgraded") {
		t.Errorf("a second install changed something:\n%s", r)
	}

	// 2. The publisher's credentials, as install says to fetch them.
	url := brokerURL(t)
	u.file("publisher.creds", string(secretData(t, runtimeNS, keyring.PublisherSecret, keyring.PublisherCredsKey)))
	u.env = append(u.env, "TINYCTL_NATS_URL="+url, "TINYCTL_NATS_CREDS="+u.dir+"/publisher.creds")

	// 3. Publish the worker; its pods run with their minted credentials.
	spec := u.file("thumbnailer.yaml", thumbnailer("5ms", 2))
	r = u.ok(time.Minute, "apply", "-f", spec)
	if !strings.Contains(r.stdout, "component/default.thumbnailer created (revision 1)") {
		t.Errorf("apply output:\n%s", r)
	}
	rolledOut(t, workerNS, workerName, 2, 2*time.Minute)
	statusReady(t, u, 1)
	// Ready means the kubelet's probe of the worker library's /readyz
	// passed: the pods are connected to the broker.
	for _, p := range podsReady(t, workerNS, "app.kubernetes.io/name="+workerName, 2, time.Minute) {
		if pr := p.Spec.Containers[0].ReadinessProbe; pr == nil || pr.HTTPGet == nil || pr.HTTPGet.Path != "/readyz" {
			t.Errorf("pod %s: readiness probe %+v, want the worker library's /readyz", p.Name, pr)
		}
		if got := readyz(p); got != "ok" {
			t.Errorf("pod %s: /readyz answered %q from the node, want ok", p.Name, got)
		}
	}
	// Two workers: a drain takes one at a time.
	pdb, err := cs.PolicyV1().PodDisruptionBudgets(workerNS).Get(ctx, workerName, metav1.GetOptions{})
	testenv.Must(t, err)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget %s: maxUnavailable %v, want 1", workerName, pdb.Spec.MaxUnavailable)
	}
	// The namespace's own accounts exist now: watch its streams' account.
	obs := observeJobs(t, url, workerNS)
	apiWrites := watchJetStreamWrites(t, obs.nc)
	accounts, accountsAt := accountIDs(t, url, workerNS), time.Now()
	handed := countHandBacks(t, obs, workerStream, workerConsumer)
	logsIfFailed(t, workerNS, "app.kubernetes.io/name="+workerName)

	// 4. A producer may publish jobs to the worker's subjects, nothing else.
	u.ok(time.Minute, "identity", "producer", workerNS, "default.thumbnail.*", "--name", "e2e", "-o", "producer.creds")
	terminated := countAdvisories(t, obs.nc, "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED."+workerStream+"."+workerConsumer)
	producer := connect(t, url, []byte(u.read("producer.creds")), "_INBOX_producer_default_e2e")
	const jobs = 50
	for i := range jobs {
		_, err := producer.js.Publish(ctx, "default.thumbnail.small", []byte(fmt.Sprintf(`{"image":"s3://bucket/%d.png","sizes":[64,128]}`, i)))
		testenv.Must(t, err)
	}
	_, err = producer.js.Publish(ctx, "default.thumbnail.small", []byte("not a job"))
	testenv.Must(t, err)
	testenv.Must(t, producer.nc.Publish("default.other", []byte("x")))
	producer.refused(t, "default.other")

	// 5. The worker pods processed every job: the work queue is empty,
	// nothing waits for an ack, and the one bad job was given up.
	drained(t, obs, handed, jobs+1)
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := terminated.Load(); n != 1 {
			return fmt.Errorf("%d jobs terminated, want the 1 bad one", n)
		}
		return nil
	})
	// spec.metricsPort: each pod serves the worker library's metrics on the
	// port named metrics, and together they counted every job.
	counted := 0.0
	for _, p := range podsReady(t, workerNS, "app.kubernetes.io/name="+workerName, 2, time.Minute) {
		if port := p.Spec.Containers[0].Ports; !slices.ContainsFunc(port, func(cp corev1.ContainerPort) bool { return cp.Name == "metrics" && cp.ContainerPort == 9464 }) {
			t.Errorf("pod %s: ports %v, want metrics 9464", p.Name, port)
		}
		counted += sumSeries(httpGet(p, 9464, "/metrics"), "tinyctl_worker_jobs_total")
	}
	if counted < jobs+1 {
		t.Errorf("the pods' /metrics count %v jobs, want at least the %d handled", counted, jobs+1)
	}

	// 6. An update rolls out new pods, which process new jobs.
	u.file("thumbnailer.yaml", thumbnailer("6ms", 2))
	u.ok(time.Minute, "apply", "-f", spec)
	statusReady(t, u, 2)
	d := rolledOut(t, workerNS, workerName, 2, 2*time.Minute)
	if got := d.Spec.Template.Spec.Containers[0].Env; !hasEnv(got, "THUMBNAIL_WORK", "6ms") {
		t.Errorf("rolled out Deployment env %v lacks THUMBNAIL_WORK=6ms", got)
	}
	podsReady(t, workerNS, "tinyctl.io/component", 2, time.Minute) // the old pods gone
	for i := range 10 {
		_, err := producer.js.Publish(ctx, "default.thumbnail.small", []byte(fmt.Sprintf(`{"image":"s3://bucket/u%d.png","sizes":[64]}`, i)))
		testenv.Must(t, err)
	}
	drained(t, obs, handed, jobs+11)

	// 7. The leading controller is killed: another (the standby, or the
	// pod that replaces the killed one) takes over and rewrites nothing, in
	// Kubernetes or in JetStream.
	leader := leaderOf(t, controllers)
	mark := kube.AuditMark(t)
	writesBefore := apiWrites.count()
	testenv.Must(t, cs.CoreV1().Pods(runtimeNS).Delete(ctx, leader.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}))
	controllers = podsReady(t, runtimeNS, "app.kubernetes.io/name=tinyctl", 2, 2*time.Minute)
	if next := leaderOf(t, controllers); next.Name == leader.Name {
		t.Fatalf("the killed pod %s still leads", leader.Name)
	}
	killed := kube.Writes(t, mark, func(e testenv.AuditEvent) bool {
		return e.ObjectRef.Resource == "pods" && e.Verb == "delete" && e.ObjectRef.Name == leader.Name
	})
	if len(killed) != 1 {
		t.Fatalf("the audit log shows %d deletes of the leader pod, want 1: it is not recording", len(killed))
	}
	if w := controllerWrites(t, mark); len(w) != 0 {
		t.Errorf("the new leader wrote %d objects, want none: %v", len(w), w)
	}
	if n := apiWrites.count() - writesBefore; n != 0 {
		t.Errorf("the new leader made %d JetStream API writes, want none: %v", n, apiWrites.since(writesBefore))
	}

	// 8. What the user sees: status, clusters, and a diff of the unchanged
	// component that is empty.
	statusReady(t, u, 2)
	r = u.ok(time.Minute, "clusters")
	if !strings.Contains(r.stdout, "default") {
		t.Errorf("tinyctl clusters does not list cluster default:\n%s", r)
	}
	r = u.run(time.Minute, "diff", "-f", spec)
	if r.code != 0 || r.stdout != "" {
		t.Errorf("diff of the unchanged component: want exit 0 and no output\n%s", r)
	}
	// Neither the new leader's start nor the account checks every 30 s
	// pushed the namespace's accounts again: the broker would have dropped
	// the pull deliveries in flight each time.
	now := accountIDs(t, url, workerNS)
	for name, id := range accounts {
		if now[name] != id {
			t.Errorf("account %s was pushed again in the %.0f s since its first component, with nothing changed", name, time.Since(accountsAt).Seconds())
		}
	}
	t.Logf("the namespace's %d accounts were not pushed again in %.0f s, across a new leader", len(accounts), time.Since(accountsAt).Seconds())
	// describe reads the queue with the install's publisher credentials,
	// through the control account's import of the namespace's jobs
	// account: every job done, nothing waits.
	var desc statusview.Description
	testenv.Must(t, json.Unmarshal([]byte(u.ok(time.Minute, "describe", workerName, "-n", workerNS, "-o", "json").stdout), &desc))
	if q := desc.Queue; q == nil || q.Jobs != 0 || q.Pending != 0 || q.AckPending != 0 || q.NoConsumer || len(desc.Clusters) != 1 ||
		desc.Clusters[0].Ready != "True" || !slices.Contains(desc.Children, "Deployment/"+workerNS+"/"+workerName) {
		t.Errorf("describe after the jobs were done: queue %+v (%s), clusters %+v, children %v", q, desc.QueueError, desc.Clusters, desc.Children)
	}

	// What the controller announced, read with the install's publisher
	// credentials from the events stream, and as Kubernetes Events written
	// under the chart's RBAC: the Deployment created at revision 1, and
	// Ready once the pods ran it.
	testenv.Eventually(t, time.Minute, func() error {
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(u.ok(time.Minute, "events", workerName, "-n", workerNS, "-o", "json").stdout), "\n") {
			var e struct {
				Revision             uint64
				Type, Reason, Object string
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				return fmt.Errorf("events -o json printed %q: %v", line, err)
			}
			got = append(got, fmt.Sprintf("%s %s %s %d", e.Type, e.Reason, e.Object, e.Revision))
		}
		for _, want := range []string{"Normal Created Deployment/" + workerName + " 1", "Normal Available  1", "Normal Configured Deployment/" + workerName + " 2"} {
			if !slices.Contains(got, want) {
				return fmt.Errorf("tinyctl events: %q, want %q among them", got, want)
			}
		}
		return nil
	})
	if !slices.ContainsFunc(desc.Events, func(e event.Event) bool { return e.Reason == "Available" }) ||
		slices.ContainsFunc(desc.Events, func(e event.Event) bool { return e.Component != workerNS+"."+workerName }) {
		t.Errorf("describe's events: %+v (%s), want this component's only, Available among them", desc.Events, desc.EventsError)
	}
	testenv.Eventually(t, time.Minute, func() error {
		got, all, err := testenv.KubeEvents(ctx, cs, workerNS, "tinyctl.io/controller")
		if err != nil {
			return err
		}
		for _, want := range []string{"Deployment/" + workerName + " Normal Created", "Deployment/" + workerName + " Normal Configured", "Deployment/" + workerName + " Normal Available"} {
			if !slices.Contains(got, want) {
				return fmt.Errorf("Kubernetes Events by tinyctl in %s: %q, want %q among them (all: %s)", workerNS, got, want, all)
			}
		}
		return nil
	})

	// 9. The install's fence: the new leader's next write stamps its newer
	// token, and a write carrying the deposed leader's (one sent before its
	// lease ran out, arriving late) is refused by the API server.
	before, err := cs.AppsV1().Deployments(workerNS).Get(ctx, workerName, metav1.GetOptions{})
	testenv.Must(t, err)
	deposed := before.Annotations[apply.AnnotationFence]
	u.file("thumbnailer.yaml", deadLettering(thumbnailer("7ms", 2)))
	u.ok(time.Minute, "apply", "-f", spec)
	statusReady(t, u, 3)
	after, err := cs.AppsV1().Deployments(workerNS).Get(ctx, workerName, metav1.GetOptions{})
	testenv.Must(t, err)
	if newer := after.Annotations[apply.AnnotationFence]; deposed == "" || !(newer > deposed) {
		t.Errorf("fencing tokens: the first leader's %q, the new leader's %q; want a later one", deposed, newer)
	}
	late := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}},"spec":{"template":{"spec":{"containers":[{"name":"worker","env":[{"name":"THUMBNAIL_WORK","value":"6ms"}]}]}}}}`,
		apply.AnnotationFence, deposed)
	_, err = cs.AppsV1().Deployments(workerNS).Patch(ctx, workerName, types.StrategicMergePatchType, []byte(late), metav1.PatchOptions{FieldManager: "tinyctl"})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), apply.AnnotationFence+" is older") {
		t.Errorf("a write with the deposed leader's token: %v, want refused by the install's fence", err)
	}

	// 9b. Dead letters (revision 3): a job the pods fail on each of its 3
	// deliveries (their results subject has no stream, so publishing the
	// result fails) is moved out of the queue, listed, and replayed
	// through the pods again.
	deadLetterRoundTrip(t, u, producer, obs)

	// 10. A delete removes everything the component made.
	u.ok(time.Minute, "delete", workerName, "-n", workerNS, "--yes")
	gone(t, "Deployment", time.Minute, func() error {
		_, err := cs.AppsV1().Deployments(workerNS).Get(ctx, workerName, metav1.GetOptions{})
		return err
	})
	gone(t, "NetworkPolicy", time.Minute, func() error {
		_, err := cs.NetworkingV1().NetworkPolicies(workerNS).Get(ctx, workerName, metav1.GetOptions{})
		return err
	})
	gone(t, "PodDisruptionBudget", time.Minute, func() error {
		_, err := cs.PolicyV1().PodDisruptionBudgets(workerNS).Get(ctx, workerName, metav1.GetOptions{})
		return err
	})
	gone(t, "credentials Secret", time.Minute, func() error {
		_, err := cs.CoreV1().Secrets(workerNS).Get(ctx, workerName+"-nats", metav1.GetOptions{})
		return err
	})
	gone(t, "stream", time.Minute, func() error {
		_, err := obs.js.Stream(ctx, workerStream)
		return err
	})
	podsReady(t, workerNS, "tinyctl.io/component", 0, time.Minute)
	if apiWrites.count() == writesBefore {
		t.Errorf("the JetStream API watch saw no write, not even the stream's delete: it is not recording")
	}
}

// statusReady waits until tinyctl status shows the worker Ready at
// revision rev on cluster default.
func statusReady(t *testing.T, u *user, rev uint64) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func() error {
		r := u.run(time.Minute, "status", workerName, "-n", workerNS, "-o", "json")
		if r.code != 0 {
			return fmt.Errorf("%s", r)
		}
		var list statusview.StatusList
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("status lists %d rows, want 1", len(list.Items))
		}
		it := list.Items[0]
		if it.Cluster != "default" || it.Ready != "True" || it.ObservedRevision != rev || it.Stale {
			return fmt.Errorf("status: cluster %s ready %s observed %d latest %d stale %v, want Ready at revision %d: %s",
				it.Cluster, it.Ready, it.ObservedRevision, it.LatestRevision, it.Stale, rev, it.Message)
		}
		return nil
	})
}

// drained waits until the worker's stream is empty and its consumer has
// delivered at least delivered jobs with none pending or unacknowledged
// (h, which may be nil, as in drainedOf).
func drained(t *testing.T, o *observer, h *handBacks, delivered uint64) {
	t.Helper()
	drainedOf(t, o, workerStream, workerConsumer, delivered, h, 90*time.Second)
}

// logsIfFailed logs the last lines of the pods selector picks in ns when
// the test has failed by its end: what the workers said about the jobs a
// failed drain check left behind.
func logsIfFailed(t *testing.T, ns, selector string) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx := context.Background()
		pods, err := clientset(t).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Logf("list pods %s in %s: %v", selector, ns, err)
			return
		}
		tail := int64(60)
		for _, p := range pods.Items {
			b, err := clientset(t).CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
			t.Logf("pod %s/%s, last %d log lines (err %v):\n%s", ns, p.Name, tail, err, b)
		}
	})
}

// handBacks counts a consumer's advisories of jobs handed back (nak) and
// of jobs that used up maxDeliver: what a drain that leaves jobs in the
// stream would show.
type handBacks struct{ naked, maxed *atomic.Int64 }

// countHandBacks starts counting consumer's advisories in stream from now on.
func countHandBacks(t *testing.T, o *observer, stream, consumer string) *handBacks {
	t.Helper()
	return &handBacks{
		naked: countAdvisories(t, o.nc, "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED."+stream+"."+consumer),
		maxed: countAdvisories(t, o.nc, "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES."+stream+"."+consumer),
	}
}

func (h *handBacks) String() string {
	if h == nil {
		return ""
	}
	return fmt.Sprintf("; advisories since the first job: %d naks, %d jobs that used up maxDeliver", h.naked.Load(), h.maxed.Load())
}

// accountIDs returns the ID (jti) of each of namespace ns's account JWTs
// the broker holds, read with the install's claims credentials: a push,
// even of the same claims, gives an account a new one.
func accountIDs(t *testing.T, url, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	creds, err := keyring.ClaimsCreds(ctx, clientset(t), runtimeNS)
	testenv.Must(t, err)
	issuer, err := keyring.Issuer(ctx, clientset(t), runtimeNS)
	testenv.Must(t, err)
	claims := connect(t, url, creds, "")
	defer claims.nc.Close()
	n, out := issuer.Namespace(ns), map[string]string{}
	for _, acc := range []string{n.JobsAccount(), n.TenantAccount(), n.PublisherAccount()} {
		c, err := identity.LookupAccount(ctx, claims.nc, acc)
		testenv.Must(t, err)
		if c == nil {
			t.Fatalf("the broker holds no account %s of namespace %s", acc, ns)
		}
		out[c.Name] = c.ID
	}
	return out
}

// drainedOf waits until stream is empty and consumer has delivered at
// least delivered jobs with none pending or unacknowledged, and returns
// when it first saw that. Its error names the hand-backs counted (h may
// be nil): jobs left in the stream with none pending or unacknowledged
// either used up their deliveries or were kept by the server.
func drainedOf(t *testing.T, o *observer, stream, consumer string, delivered uint64, h *handBacks, within time.Duration) time.Time {
	t.Helper()
	ctx := context.Background()
	testenv.EventuallyEvery(t, within, 250*time.Millisecond, func() error {
		s, err := o.js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		c, err := s.Consumer(ctx, consumer)
		if err != nil {
			return err
		}
		si, ci := s.CachedInfo(), c.CachedInfo()
		if si.State.Msgs != 0 || ci.NumPending != 0 || ci.NumAckPending != 0 || ci.Delivered.Consumer < delivered {
			return fmt.Errorf("stream %s holds %d jobs (sequences %d–%d, ack floor %d); consumer: %d pending, %d unacknowledged, %d delivered (want 0, 0, 0, ≥ %d)%s",
				stream, si.State.Msgs, si.State.FirstSeq, si.State.LastSeq, ci.AckFloor.Stream, ci.NumPending, ci.NumAckPending, ci.Delivered.Consumer, delivered, h)
		}
		return nil
	})
	return time.Now()
}

// countAdvisories counts the messages on subject from now on.
func countAdvisories(t *testing.T, nc *nats.Conn, subject string) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	sub, err := nc.Subscribe(subject, func(*nats.Msg) { n.Add(1) })
	testenv.Must(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	testenv.Must(t, nc.Flush())
	return &n
}

// leaderOf waits until exactly one of pods says on /readyz that it leads,
// and returns it.
func leaderOf(t *testing.T, pods []corev1.Pod) corev1.Pod {
	t.Helper()
	var leader corev1.Pod
	testenv.EventuallyEvery(t, 2*time.Minute, time.Second, func() error {
		var says []string
		var leaders []corev1.Pod
		for _, p := range pods {
			got := readyz(p)
			says = append(says, p.Name+": "+got)
			if got == "ready (leader)" {
				leaders = append(leaders, p)
			}
		}
		if len(leaders) != 1 {
			return fmt.Errorf("%d controller pods lead, want 1: %v", len(leaders), says)
		}
		leader = leaders[0]
		return nil
	})
	return leader
}

// controllerWrites are the writes the controller's ServiceAccount made
// after mark.
func controllerWrites(t *testing.T, mark int64) []string {
	var out []string
	for _, e := range kube.Writes(t, mark, func(e testenv.AuditEvent) bool { return e.User.Username == controllerSA }) {
		out = append(out, e.Verb+" "+e.ObjectRef.Resource+"/"+e.ObjectRef.Namespace+"/"+e.ObjectRef.Name)
	}
	return out
}

// jsWrites records the JetStream API calls that create, update, delete
// or purge a stream or consumer (not the buckets' read consumers).
type jsWrites struct {
	mu    sync.Mutex
	calls []string
}

func watchJetStreamWrites(t *testing.T, nc *nats.Conn) *jsWrites {
	t.Helper()
	w := &jsWrites{}
	sub, err := nc.Subscribe("$JS.EVENT.ADVISORY.API", func(m *nats.Msg) {
		var audit struct {
			Subject string `json:"subject"`
		}
		_ = json.Unmarshal(m.Data, &audit)
		if strings.Contains(audit.Subject, ".KV_") {
			return // KV watches and listings create ephemeral read consumers
		}
		for _, verb := range []string{".CREATE.", ".UPDATE.", ".DELETE.", ".PURGE."} {
			if strings.Contains(audit.Subject, verb) {
				w.mu.Lock()
				w.calls = append(w.calls, audit.Subject)
				w.mu.Unlock()
				return
			}
		}
	})
	testenv.Must(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	testenv.Must(t, nc.Flush())
	return w
}

func (w *jsWrites) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.calls)
}

func (w *jsWrites) since(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string{}, w.calls[n:]...)
}

// hasEnv reports whether env sets name to value.
func hasEnv(env []corev1.EnvVar, name, value string) bool {
	for _, e := range env {
		if e.Name == name {
			return e.Value == value
		}
	}
	return false
}
