package workload

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api/reasons"
)

func deployment(gen, observed int64, want *int32, status appsv1.DeploymentStatus) *appsv1.Deployment {
	status.ObservedGeneration = observed
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: gen},
		Spec: appsv1.DeploymentSpec{Replicas: want}, Status: status}
}

func waitingPod(name, reason string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "worker", Image: "registry.example.com/w:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
	}}}}
}

// exitedPod is a pod whose worker exited with code after one restart: it
// waits to be restarted again, or (running) runs again.
func exitedPod(name string, code int32, running bool) *corev1.Pod {
	c := corev1.ContainerStatus{Name: "worker", Image: "registry.example.com/w:1", RestartCount: 1,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}}
	if running {
		c.State.Running = &corev1.ContainerStateRunning{}
	} else {
		c.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{c}}}
}

func TestAssess(t *testing.T) {
	two, zero := int32(2), int32(0)
	rolled := appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}
	halfway := appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1, AvailableReplicas: 2}
	unschedulable := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "u"}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 Insufficient cpu."}}}}
	leaving := waitingPod("old", "CrashLoopBackOff")
	leaving.DeletionTimestamp = &metav1.Time{}
	tests := []struct {
		name           string
		d              *appsv1.Deployment
		pods           []*corev1.Pod
		ready, degr    bool
		reason, inText string
	}{
		{"not observed", nil, nil, false, false, reasons.Progressing, "not observed yet"},
		{"generation not observed", deployment(2, 1, &two, rolled), nil, false, false, reasons.Progressing, "observe generation 2"},
		{"rolled out", deployment(2, 2, &two, rolled), nil, true, false, reasons.Available, "2 of 2 replicas"},
		{"replicas unset means one", deployment(1, 1, nil, appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}), nil, true, false, reasons.Available, "1 of 1"},
		{"scaled to zero", deployment(3, 3, &zero, appsv1.DeploymentStatus{}), nil, true, false, reasons.ScaledToZero, "scaled to zero"},
		{"rolling out", deployment(2, 2, &two, halfway), nil, false, false, reasons.Progressing, "1 of 2 replicas updated, 2 available"},
		{"image cannot be pulled", deployment(2, 2, &two, halfway), []*corev1.Pod{waitingPod("a", "ErrImagePull"), waitingPod("b", "ImagePullBackOff")},
			false, true, reasons.ImagePullBackOff, `pod a cannot pull image "registry.example.com/w:1" (container worker) (and 1 more pods)`},
		{"crash loop", deployment(2, 2, &two, halfway), []*corev1.Pod{waitingPod("c", "CrashLoopBackOff")},
			false, true, reasons.CrashLoopBackOff, "container worker of pod c keeps exiting (last exit code 1, Error)"},
		{"a pod being deleted does not count", deployment(2, 2, &two, halfway), []*corev1.Pod{leaving}, false, false, reasons.Progressing, "rolling out"},
		{"image pull outranks a crash", deployment(2, 2, &two, halfway), []*corev1.Pod{waitingPod("a", "CrashLoopBackOff"), waitingPod("b", "ErrImagePull")},
			false, true, reasons.ImagePullBackOff, "pod b"},
		{"unschedulable", deployment(2, 2, &two, halfway), []*corev1.Pod{unschedulable}, false, true, reasons.Unschedulable, "Insufficient cpu"},
		{"config error passes the kubelet's reason", deployment(2, 2, &two, halfway), []*corev1.Pod{func() *corev1.Pod {
			p := waitingPod("s", "CreateContainerConfigError")
			p.Status.ContainerStatuses[0].State.Waiting.Message = `secret "db" not found`
			return p
		}()}, false, true, "CreateContainerConfigError", `secret "db" not found`},
		{"pods refused", deployment(2, 2, &two, appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: `pods "w-1" is forbidden: violates PodSecurity`}}}),
			nil, false, true, reasons.FailedCreate, "violates PodSecurity"},
		{"deadline", deployment(2, 2, &two, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 1, Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "w-1" has timed out progressing.`}}}),
			nil, false, true, reasons.ProgressDeadlineExceeded, "timed out progressing"},
		{"a crash loop seen as exited (before its back-off)", deployment(2, 2, &two, halfway), []*corev1.Pod{exitedPod("e", 2, false)},
			false, true, reasons.CrashLoopBackOff, "container worker of pod e keeps exiting (last exit code 2, Error)"},
		{"a crash loop seen running again, not ready", deployment(2, 2, &two, halfway), []*corev1.Pod{exitedPod("r", 2, true)},
			false, true, reasons.CrashLoopBackOff, "container worker of pod r keeps exiting (last exit code 2, Error)"},
		{"a pod running and ready after a crash is no trouble", deployment(2, 2, &two, halfway), []*corev1.Pod{func() *corev1.Pod {
			p := exitedPod("ok", 2, true)
			p.Status.ContainerStatuses[0].Ready = true
			return p
		}()}, false, false, reasons.Progressing, "rolling out"},
		{"an evicted pod is no trouble (it is replaced)", deployment(2, 2, &two, halfway), []*corev1.Pod{func() *corev1.Pod {
			p := exitedPod("ev", 137, false)
			p.Status.Phase = corev1.PodFailed
			return p
		}()}, false, false, reasons.Progressing, "rolling out"},
		{"a finished init container is no trouble", deployment(2, 2, &two, halfway), []*corev1.Pod{func() *corev1.Pod {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "i"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}}
			return p
		}()}, false, false, reasons.Progressing, "rolling out"},
		{"a finished rollout ignores leftover pod trouble", deployment(2, 2, &two, rolled), []*corev1.Pod{waitingPod("x", "CrashLoopBackOff")}, true, false, reasons.Available, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Assess(tt.d, tt.pods)
			if h.Ready != tt.ready || h.Degraded != tt.degr || h.Reason != tt.reason || !strings.Contains(h.Message, tt.inText) {
				t.Errorf("Assess = %+v, want ready %v degraded %v reason %s, message containing %q", h, tt.ready, tt.degr, tt.reason, tt.inText)
			}
			if again := Assess(tt.d, tt.pods); again != h {
				t.Errorf("Assess is not stable: %+v then %+v", h, again)
			}
		})
	}
}
