package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/internal/localnode"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// The scaled component: its stream and consumer.
const (
	scalerName     = "scaler"
	scalerStream   = "tinyctl_default_scaler"
	scalerConsumer = "tinyctl_default_scaler_worker"
)

// scaler is the example worker scaled by KEDA on its consumer's pending
// jobs: none when the queue is empty, one per 5 pending jobs up to 3.
func scaler() string {
	return worker(scalerName, localnode.ExampleWorkerImage, "500ms", `scaling:
    minReplicas: 0
    maxReplicas: 3
    lagThreshold: 5
    pollingInterval: 1
    cooldownPeriod: 10`)
}

// TestKEDAScalesAComponentFromZeroAndBack installs KEDA as `tinyctl
// install --with-keda` does (its operator and metrics server from images
// built here from KEDA's Go module), publishes a component that scales,
// and shows KEDA scaling it on its consumer's depth: zero pods on an empty
// queue (Ready, ScaledToZero), several while jobs wait, zero again once
// they are done. It logs the seconds from the first job to the first ready
// pod and from the last ack to zero pods (docs/benchmarks.md).
func TestKEDAScalesAComponentFromZeroAndBack(t *testing.T) {
	u := newUser(t)
	ctx := context.Background()
	r := u.ok(10*time.Minute, "install", "--with-keda", "--wait", "--timeout", "5m")
	if !strings.Contains(r.stdout, "Release/keda/keda created (keda-2.21.0") {
		t.Errorf("install --with-keda output:\n%s", r)
	}
	podsReady(t, "keda", "app.kubernetes.io/name=keda-operator", 1, 2*time.Minute)
	podsReady(t, "keda", "app.kubernetes.io/name=keda-metrics-apiserver", 1, 3*time.Minute)
	externalMetricsAvailable(t)

	url := brokerURL(t)
	u.file("publisher.creds", string(secretData(t, runtimeNS, keyring.PublisherSecret, keyring.PublisherCredsKey)))
	u.env = append(u.env, "TINYCTL_NATS_URL="+url, "TINYCTL_NATS_CREDS="+u.dir+"/publisher.creds")
	t.Cleanup(func() { u.run(time.Minute, "delete", scalerName, "-n", "default", "--yes") })

	// An empty queue: KEDA scales the new Deployment to zero, which is Ready.
	u.ok(4*time.Minute, "apply", "-f", u.file("scaler.yaml", scaler()), "--wait", "--timeout", "3m")
	replicasBecome(t, 0, 3*time.Minute)
	testenv.Eventually(t, time.Minute, func() error {
		if it := statusOf(t, u, scalerName); it.Ready != "True" || it.Reason != "ScaledToZero" {
			return fmt.Errorf("scaler at zero: ready %s reason %s (%s), want Ready ScaledToZero", it.Ready, it.Reason, it.Message)
		}
		return nil
	})
	// The controller looks for KEDA before each heartbeat: status stops
	// warning by the next one.
	testenv.Eventually(t, time.Minute, func() error {
		if r := u.run(time.Minute, "status", scalerName, "-n", "default"); strings.Contains(r.stderr, "runs no KEDA operator") {
			return fmt.Errorf("status still warns that KEDA does not run:\n%s", r)
		}
		return nil
	})

	// 200 jobs of 1 s each (about 50 s for one pod, four at a time): KEDA
	// activates the Deployment, and the HPA controller (every 15 s) asks
	// KEDA's metrics server for the depth and scales it out.
	u.ok(time.Minute, "identity", "producer", "default", "default.scaler.*", "--name", "e2e-scale", "-o", "scale.creds")
	producer := connect(t, url, []byte(u.read("scale.creds")), "_INBOX_producer_default_e2e-scale")
	obs := observeJobs(t, url, "default")
	handed := countHandBacks(t, obs, scalerStream, scalerConsumer)
	first := time.Now()
	const jobs = 200
	for i := range jobs {
		_, err := producer.js.Publish(ctx, "default.scaler.img", fmt.Appendf(nil, `{"image":"s3://bucket/%d.png","sizes":[64,128]}`, i))
		testenv.Must(t, err)
	}
	podsAtLeast(t, 1, 3*time.Minute)
	firstPod := time.Since(first)
	most := replicasBecome(t, 2, 3*time.Minute)
	scaledOut := time.Since(first)

	// Every job done: zero pods again after the cooldown.
	lastAck := drainedOf(t, obs, scalerStream, scalerConsumer, jobs, handed, 3*time.Minute)
	replicasBecome(t, 0, 3*time.Minute)
	podsReady(t, "default", "app.kubernetes.io/name="+scalerName, 0, 2*time.Minute)
	toZero := time.Since(lastAck)
	t.Logf("KEDA: first job → first ready pod %.1f s; → %d replicas asked for %.1f s; last ack → zero pods %.1f s (cooldownPeriod 10 s, pollingInterval 1 s)%s",
		firstPod.Seconds(), most, scaledOut.Seconds(), toZero.Seconds(), handed)
}

// externalMetricsAvailable waits until the API server reports KEDA's
// external metrics APIService Available: the aggregation layer reaches
// the metrics server with the certificates the operator made.
func externalMetricsAvailable(t *testing.T) {
	t.Helper()
	dyn, _ := kube.Dynamic(t)
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	testenv.Eventually(t, 3*time.Minute, func() error {
		svc, err := dyn.Resource(gvr).Get(context.Background(), "v1beta1.external.metrics.k8s.io", metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(svc.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Available" {
				if m["status"] == "True" {
					return nil
				}
				return fmt.Errorf("APIService v1beta1.external.metrics.k8s.io not available: %v %v", m["reason"], m["message"])
			}
		}
		return fmt.Errorf("APIService v1beta1.external.metrics.k8s.io has no Available condition yet")
	})
}

// replicasBecome waits until the scaler's Deployment asks for want
// replicas (at least want, when want > 0) and returns how many it asks for.
func replicasBecome(t *testing.T, want int32, within time.Duration) int32 {
	t.Helper()
	var got int32
	testenv.EventuallyEvery(t, within, 250*time.Millisecond, func() error {
		d, err := clientset(t).AppsV1().Deployments("default").Get(context.Background(), scalerName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got = replicasOf(d)
		if (want == 0 && got != 0) || got < want {
			return fmt.Errorf("scaler asks for %d replicas, want %d", got, want)
		}
		return nil
	})
	return got
}

func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// podsAtLeast waits until at least n of the scaler's pods are ready.
func podsAtLeast(t *testing.T, n int, within time.Duration) {
	t.Helper()
	testenv.EventuallyEvery(t, within, 250*time.Millisecond, func() error {
		list, err := clientset(t).CoreV1().Pods("default").List(context.Background(),
			metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + scalerName})
		if err != nil {
			return err
		}
		ready := 0
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && isReady(p) {
				ready++
			}
		}
		if ready < n {
			return fmt.Errorf("%d scaler pods ready, want %d", ready, n)
		}
		return nil
	})
}
