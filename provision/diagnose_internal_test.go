package provision

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodProblemsSayWhatKeepsAPodFromReady builds the pods a user meets on
// a real node and checks the explanation names the cause.
func TestPodProblemsSayWhatKeepsAPodFromReady(t *testing.T) {
	pod := func(status corev1.PodStatus) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "rt", Name: "p-0"}, Status: status}
	}
	events := warningEvents{{InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p-0"}, Reason: "FailedScheduling", Message: "0/1 nodes are available"}}
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want []string
	}{
		{"unschedulable", pod(corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims"}}}),
			[]string{"Pod/rt/p-0 is Pending, not scheduled: Unschedulable: 0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims", "events: FailedScheduling: 0/1 nodes are available"}},
		{"image missing", pod(corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "nats", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: `image "nats:9" is not present`}}}}}),
			[]string{`container nats is waiting: ErrImageNeverPull: image "nats:9" is not present`}},
		{"crash loop", pod(corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "controller", RestartCount: 4,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "starting\nError: account signing key: permission denied"}}}}}),
			[]string{"container controller is waiting: CrashLoopBackOff; restarted 4 times, last exit code 1 (Error): Error: account signing key: permission denied"}},
		{"not ready yet", pod(corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}),
			[]string{"container c is running but not ready (its readiness probe fails)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(podProblems(tc.pod, events), "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("podProblems =\n%s\nwant it to say %q", got, w)
				}
			}
		})
	}
	ready := pod(corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}})
	if got := podProblems(ready, events); got != nil {
		t.Errorf("a ready pod has problems: %q", got)
	}
}
