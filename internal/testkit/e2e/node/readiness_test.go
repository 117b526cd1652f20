package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/internal/localnode"
	"github.com/tinyctl/tinyctl/internal/statusview"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// probe is a worker component of the example image on the real node:
// image and THUMBNAIL_WORK set what its pod does, replicas how many run.
func probe(name, image, work string, replicas int) string {
	return worker(name, image, work, fmt.Sprintf("replicas: %d", replicas))
}

// worker is a component of the example worker, consuming default.NAME.*,
// sized by sizing (replicas, or a scaling block), its stream deleted with
// it.
func worker(name, image, work, sizing string) string {
	return fmt.Sprintf(`apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata:
  name: %s
  namespace: default
spec:
  image: %s
  env:
    - {name: THUMBNAIL_WORK, value: %q}
  resources:
    requests: {cpu: 10m, memory: 16Mi}
    limits: {memory: 128Mi}
  jobs:
    subjects: ["default.%s.*"]
  %s
  egress: none
  deletion: {stream: Delete}
`, name, image, work, name, sizing)
}

// TestReadyMeansThePodsRun, on the real node with a default install: an
// image that cannot be pulled, a worker that exits at start and a pod no
// node can hold are applied but not Ready, Degraded with the kubelet's or
// the scheduler's reason, and apply --wait exits 1 saying so; a fixed revision is Ready again and apply
// --wait exits 0 once its pods run; scaled to zero is Ready too.
func TestReadyMeansThePodsRun(t *testing.T) {
	u := newUser(t)
	u.ok(5*time.Minute, "install", "--wait", "--timeout", "3m") // a no-op after the install test
	u.file("publisher.creds", string(secretData(t, runtimeNS, keyring.PublisherSecret, keyring.PublisherCredsKey)))
	u.env = append(u.env, "TINYCTL_NATS_URL="+brokerURL(t), "TINYCTL_NATS_CREDS="+u.dir+"/publisher.creds")
	t.Cleanup(func() {
		for _, name := range []string{"unpullable", "crasher", "greedy"} {
			u.run(time.Minute, "delete", name, "-n", "default", "--yes")
		}
	})

	// Nothing serves images on port 1 of this node: every pull fails.
	bad := u.file("unpullable.yaml", probe("unpullable", "127.0.0.1:1/acme/missing:1", "5ms", 1))
	r := u.run(2*time.Minute, "apply", "-f", bad, "--wait", "--timeout", "30s")
	if r.code != 1 || !strings.Contains(r.stderr, "default.unpullable on cluster default: ImagePullBackOff: pod unpullable-") ||
		!strings.Contains(r.stderr, `cannot pull image "127.0.0.1:1/acme/missing:1"`) {
		t.Errorf("apply --wait of an image that cannot be pulled: want exit 1 naming ImagePullBackOff\n%s", r)
	}
	degraded(t, u, "unpullable", "ImagePullBackOff")

	// The worker exits at once: THUMBNAIL_WORK is not a duration.
	crash := u.file("crasher.yaml", probe("crasher", localnode.ExampleWorkerImage, "often", 1))
	r = u.run(2*time.Minute, "apply", "-f", crash, "--wait", "--timeout", "30s")
	if r.code != 1 || !strings.Contains(r.stderr, "timed out after 30s waiting for Ready") {
		t.Errorf("apply --wait of a crashing worker: want exit 1 at the timeout\n%s", r)
	}
	st := degraded(t, u, "crasher", "CrashLoopBackOff")
	if !strings.Contains(st.Message, "keeps exiting (last exit code 2, Error)") {
		t.Errorf("crasher's message %q does not give the worker's exit code 2", st.Message)
	}

	// A pod asking for more CPU than the node has.
	greedy := strings.Replace(probe("greedy", localnode.ExampleWorkerImage, "5ms", 1), "cpu: 10m", `cpu: "64"`, 1)
	r = u.run(2*time.Minute, "apply", "-f", u.file("greedy.yaml", greedy), "--wait", "--timeout", "20s")
	if r.code != 1 || !strings.Contains(r.stderr, "default.greedy on cluster default: Unschedulable: pod greedy-") ||
		!strings.Contains(r.stderr, "Insufficient cpu") {
		t.Errorf("apply --wait of a pod no node can hold: want exit 1 naming Unschedulable and the scheduler's reason\n%s", r)
	}
	u.ok(time.Minute, "delete", "greedy", "-n", "default", "--yes")

	// Fixed revisions roll out; apply --wait returns once their pods run.
	for _, fix := range []struct {
		name     string
		replicas int
	}{{"unpullable", 1}, {"crasher", 2}} {
		spec := probe(fix.name, localnode.ExampleWorkerImage, "5ms", fix.replicas)
		r = u.ok(4*time.Minute, "apply", "-f", u.file(fix.name+".yaml", spec), "--wait", "--timeout", "3m")
		if !strings.Contains(r.stdout, "component/default."+fix.name+" Ready on cluster default (revision") {
			t.Errorf("apply --wait of the fixed %s:\n%s", fix.name, r)
		}
		podsReady(t, "default", "app.kubernetes.io/name="+fix.name, fix.replicas, time.Minute)
		if it := statusOf(t, u, fix.name); it.Ready != "True" || it.Reason != "Available" || it.Degraded {
			t.Errorf("%s after the fix: ready %s reason %s degraded %v: %s", fix.name, it.Ready, it.Reason, it.Degraded, it.Message)
		}
	}

	// Scaled to zero is as asked: Ready.
	r = u.ok(3*time.Minute, "apply", "-f", u.file("crasher.yaml", probe("crasher", localnode.ExampleWorkerImage, "5ms", 0)),
		"--wait", "--timeout", "2m")
	if it := statusOf(t, u, "crasher"); it.Ready != "True" || it.Reason != "ScaledToZero" {
		t.Errorf("crasher scaled to zero: ready %s reason %s: %s\n%s", it.Ready, it.Reason, it.Message, r)
	}
	podsReady(t, "default", "app.kubernetes.io/name=crasher", 0, time.Minute)
}

// statusOf returns `tinyctl status NAME -n default -o json`'s one row.
func statusOf(t *testing.T, u *user, name string) statusview.StatusItem {
	t.Helper()
	r := u.ok(time.Minute, "status", name, "-n", "default", "-o", "json")
	var list statusview.StatusList
	testenv.Must(t, json.Unmarshal([]byte(r.stdout), &list))
	if len(list.Items) != 1 {
		t.Fatalf("status %s lists %d rows, want 1:\n%s", name, len(list.Items), r)
	}
	return list.Items[0]
}

// degraded waits until status shows name applied, not Ready, and
// Degraded with reason.
func degraded(t *testing.T, u *user, name, reason string) statusview.StatusItem {
	t.Helper()
	var it statusview.StatusItem
	testenv.EventuallyEvery(t, 2*time.Minute, 250*time.Millisecond, func() error {
		it = statusOf(t, u, name)
		if it.Applied != "True" || it.Ready != "False" || !it.Degraded || it.Reason != reason {
			return fmt.Errorf("%s: applied %s ready %s degraded %v reason %s (%s), want applied, Degraded with %s; its pods: %s",
				name, it.Applied, it.Ready, it.Degraded, it.Reason, it.Message, reason, podsOf(t, "default", name))
		}
		return nil
	})
	return it
}

// podsOf says what component name's pods in ns are doing, as kubectl get
// pods would, for a failure message.
func podsOf(t *testing.T, ns, name string) string {
	list, err := clientset(t).CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + name})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, p := range list.Items {
		restarts := int32(0)
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
		out = append(out, fmt.Sprintf("%s %s, %d restarts, %s", p.Name, p.Status.Phase, restarts, containerStates(p)))
	}
	return fmt.Sprintf("%d %v", len(out), out)
}
