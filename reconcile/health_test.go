package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// TestReadyFollowsTheWorkload: a component is Applied as soon as its
// children are, and Ready only once its Deployment's status says the pods
// run that revision. The test plays the Deployment controller and the
// kubelet by writing the status subresources, as they would; the real
// ones are proven on the real node (internal/testkit/e2e/node). A new revision is
// never reported Ready on the strength of the old one's pods, and a pod
// that cannot pull its image makes the component Degraded, naming it.
func TestReadyFollowsTheWorkload(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	e.start()
	ctx := context.Background()
	apps := kube.Clientset(t).AppsV1().Deployments(e.ns)
	two := func(c *api.Component) { c.Spec.Replicas = ptr.To(int32(2)) }

	rev1 := e.publish(e.component("runner", two))
	e.waitStatus("runner", api.ConditionApplied, "True", rev1)
	// The first record may be written before the Deployment is in the
	// workload cache ("not observed yet"); the next one names the generation.
	e.waitConditionSays("runner", rev1, api.ConditionReady, "False", reasons.Progressing, "observe generation 1")

	// observed writes the status the Deployment controller would.
	observed := func(replicas, updated, available int32) {
		t.Helper()
		d, err := apps.Get(ctx, "runner", metav1.GetOptions{})
		testenv.Must(t, err)
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: available, AvailableReplicas: available}
		_, err = apps.UpdateStatus(ctx, d, metav1.UpdateOptions{})
		testenv.Must(t, err)
	}
	rolledOut := func() { t.Helper(); observed(2, 2, 2) }
	rolledOut()
	rec := e.waitStatus("runner", api.ConditionReady, "True", rev1)
	expectCondition(t, rec, api.ConditionReady, "True", reasons.Available, "2 of 2 replicas")
	expectCondition(t, rec, api.ConditionDegraded, "False", reasons.Available, "")

	// A new image: Applied at once, not Ready while the old pods run.
	written := e.recordStatuses("runner")
	rev2 := e.publish(e.component("runner", two, func(c *api.Component) { c.Spec.Image += "-2" }))
	rec = e.waitStatus("runner", api.ConditionApplied, "True", rev2)
	expectCondition(t, rec, api.ConditionReady, "False", reasons.Progressing, "")

	// The rollout starts: one new pod, which cannot pull its image.
	observed(3, 1, 2)
	pod := e.workerPod("runner-new")
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: "registry.example.com/acme/runner:1.0.0-2",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "connection refused"}}}}
	_, err := kube.Clientset(t).CoreV1().Pods(e.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	testenv.Must(t, err)
	rec = e.waitStatus("runner", api.ConditionDegraded, "True", rev2)
	expectCondition(t, rec, api.ConditionReady, "False", reasons.ImagePullBackOff, `pod runner-new cannot pull image "registry.example.com/acme/runner:1.0.0-2"`)

	// The rollout completes: Ready at revision 2.
	testenv.Must(t, kube.Clientset(t).CoreV1().Pods(e.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}))
	rolledOut()
	e.waitStatus("runner", api.ConditionReady, "True", rev2)

	// Every record written at revision 2 before the rollout completed said
	// not Ready.
	seen, degraded := 0, false
	for _, st := range written() {
		if st.ObservedRevision != rev2 {
			continue
		}
		seen++
		degraded = degraded || st.IsTrue(api.ConditionDegraded)
		if st.IsTrue(api.ConditionReady) && !degraded {
			c, _ := st.Condition(api.ConditionReady)
			t.Errorf("record %d at revision %d said Ready before the new pods ran: %+v", seen, rev2, c)
		}
	}
	if seen < 3 {
		t.Errorf("%d records written at revision %d, want at least 3 (progressing, degraded, progressing or ready)", seen, rev2)
	}
}

// expectCondition fails unless rec has condition typ with status, reason
// and a message containing text.
func expectCondition(t *testing.T, rec status.Record, typ, want, reason, text string) {
	t.Helper()
	c, ok := rec.Condition(typ)
	if !ok || string(c.Status) != want || c.Reason != reason || !strings.Contains(c.Message, text) {
		t.Errorf("%s = %+v, want %s %s with a message containing %q", typ, c, want, reason, text)
	}
}

// waitConditionSays waits until component name's status at rev has
// condition typ with status want, reason and a message containing text.
func (e *env) waitConditionSays(name string, rev uint64, typ, want, reason, text string) {
	e.t.Helper()
	testenv.Eventually(e.t, 30*time.Second, func() error {
		rec, err := e.statuses.Get(context.Background(), api.Key(e.ns, name), e.cfg.Cluster.Name)
		if err != nil {
			return err
		}
		c, ok := rec.Condition(typ)
		if rec.ObservedRevision != rev || !ok || string(c.Status) != want || c.Reason != reason || !strings.Contains(c.Message, text) {
			return fmt.Errorf("revision %d %s = %+v, want revision %d %s %s with a message containing %q", rec.ObservedRevision, typ, c, rev, want, reason, text)
		}
		return nil
	})
}

// workerPod creates a pod as the Deployment of component owner would (its
// labels), restricted-compliant, and returns it.
func (e *env) workerPod(name string) *corev1.Pod {
	e.t.Helper()
	owner := strings.TrimSuffix(name, "-new")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: map[string]string{
		render.LabelManagedBy: render.ManagedByValue, render.LabelName: owner, render.LabelComponent: render.ComponentLabelValue(e.ns, owner)}},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(65532)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "worker", Image: "registry.example.com/acme/runner:1.0.0-2",
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		}}
	// No controller-manager runs here to make the namespace's default
	// ServiceAccount, which admission wants for a pod.
	_, err := kube.Clientset(e.t).CoreV1().ServiceAccounts(e.ns).Create(context.Background(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
	created, err := kube.Clientset(e.t).CoreV1().Pods(e.ns).Create(context.Background(), pod, metav1.CreateOptions{})
	testenv.Must(e.t, err)
	return created
}

// recordStatuses records every status of component name this cluster
// writes from now on; call the function returned for what was written.
func (e *env) recordStatuses(name string) func() []api.Status {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	kv, err := e.js.KeyValue(ctx, status.DefaultBucket)
	testenv.Must(e.t, err)
	w, err := kv.Watch(ctx, status.Key(api.Key(e.ns, name), e.cfg.Cluster.Name), jetstream.UpdatesOnly())
	testenv.Must(e.t, err)
	var mu sync.Mutex
	var out []api.Status
	go func() {
		for u := range w.Updates() {
			var st api.Status
			if u != nil && json.Unmarshal(u.Value(), &st) == nil {
				mu.Lock()
				out = append(out, st)
				mu.Unlock()
			}
		}
	}()
	return func() []api.Status {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(out)
	}
}

// TestACrashLoopCostsOnlyAJudgementOfHealth: once a component (with
// credentials of its own, whose rotation is scheduled at every reconcile)
// is applied, its pod going from running to crash-looping makes it
// Degraded with the container's exit code, and none of the workload's
// events costs a full reconcile (counted by the stream lookups a full
// reconcile of a known component makes: a judgement of health makes none).
func TestACrashLoopCostsOnlyAJudgementOfHealth(t *testing.T) {
	e, _ := mintingEnv(t, time.Hour)
	e.start()
	ctx := context.Background()
	info := "$JS.API.STREAM.INFO." + render.StreamName(e.ns, "crasher")
	lookups := watchJetStreamAPI(t, e.conn.NATS(), func(s string) bool { return s == info })
	rev := e.publish(e.component("crasher"))
	e.waitStatus("crasher", api.ConditionApplied, "True", rev)

	apps := kube.Clientset(t).AppsV1().Deployments(e.ns)
	d, err := apps.Get(ctx, "crasher", metav1.GetOptions{})
	testenv.Must(t, err)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1}
	_, err = apps.UpdateStatus(ctx, d, metav1.UpdateOptions{})
	testenv.Must(t, err)
	e.waitConditionSays("crasher", rev, api.ConditionReady, "False", reasons.Progressing, "1 of 1 replicas updated, 0 available")

	pods := kube.Clientset(t).CoreV1().Pods(e.ns)
	pod := e.workerPod("crasher")
	setState := func(s corev1.ContainerState, last *corev1.ContainerStateTerminated, restarts int32, ready bool) {
		t.Helper()
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: pod.Spec.Containers[0].Image,
			State: s, LastTerminationState: corev1.ContainerState{Terminated: last}, RestartCount: restarts, Ready: ready}}
		pod, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		testenv.Must(t, err)
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	exited := &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}
	setState(running, nil, 0, false)
	e.waitConditionSays("crasher", rev, api.ConditionReady, "False", reasons.Progressing, "0 available")
	// The kubelet's crash loop, as it shows it in turn: exited, waiting out
	// the back-off, running again (not ready): Degraded throughout.
	setState(corev1.ContainerState{Terminated: exited}, nil, 0, false)
	e.waitConditionSays("crasher", rev, api.ConditionDegraded, "True", reasons.CrashLoopBackOff, "keeps exiting (last exit code 2, Error)")
	written := e.recordStatuses("crasher")
	setState(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s"}}, exited, 1, false)
	setState(running, exited, 1, false)
	setState(running, exited, 1, true) // it stays up: no longer crashing
	e.waitConditionSays("crasher", rev, api.ConditionReady, "False", reasons.Progressing, "0 available")
	// From the back-off to the container staying up the judgement held:
	// the one record written since says it stopped crashing.
	if recs := written(); len(recs) != 1 || recs[0].IsTrue(api.ConditionDegraded) {
		t.Errorf("records written from the back-off to the container staying up: %+v, want one, not Degraded", recs)
	}
	if n := lookups.count(); n != 0 {
		t.Errorf("the workload's events cost %d full reconciles (stream lookups %v), want 0", n, lookups.seen())
	}
}
