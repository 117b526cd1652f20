package workload

import (
	"cmp"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/tinyctl/tinyctl/api/reasons"
)

// Health is what a component's workload is doing.
type Health struct {
	// Ready: every replica runs the applied revision and is available, or
	// the workload is scaled to zero.
	Ready bool
	// Degraded: something a user must act on stops the rollout (Reason
	// says what); it is not ready either.
	Degraded bool
	// Reason is a reasons constant (or a kubelet reason passed through);
	// Message says it in words, naming the pod and container concerned.
	Reason, Message string
}

// Assess judges a Deployment (nil: not observed yet) and its pods. It is
// pure: the same objects give the same Health, word for word, so that an
// unchanged workload never causes a status write.
func Assess(d *appsv1.Deployment, pods []*corev1.Pod) Health {
	if d == nil {
		return progressing("the Deployment is not observed yet")
	}
	if d.Generation > d.Status.ObservedGeneration {
		return progressing(fmt.Sprintf("waiting for the Deployment controller to observe generation %d (it has observed %d)",
			d.Generation, d.Status.ObservedGeneration))
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	if s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want {
		if want == 0 {
			return Health{Ready: true, Reason: reasons.ScaledToZero, Message: "scaled to zero: no replica runs"}
		}
		return Health{Ready: true, Reason: reasons.Available, Message: fmt.Sprintf("%d of %d replicas updated and available", want, want)}
	}
	if h, ok := trouble(d, pods); ok {
		return h
	}
	return progressing(fmt.Sprintf("rolling out: %d of %d replicas updated, %d available", s.UpdatedReplicas, want, s.AvailableReplicas))
}

func progressing(msg string) Health {
	return Health{Reason: reasons.Progressing, Message: msg}
}

// trouble finds what stops a rollout, most telling first: the API server
// refusing pods, a pod's image or container, a pod the scheduler cannot
// place, then the Deployment's own progress deadline.
func trouble(d *appsv1.Deployment, pods []*corev1.Pod) (Health, bool) {
	if c, ok := deploymentCondition(d, appsv1.DeploymentReplicaFailure); ok && c.Status == corev1.ConditionTrue {
		return degraded(reasons.FailedCreate, "the API server refuses the Deployment's pods: "+c.Message), true
	}
	if h, ok := podTrouble(pods); ok {
		return h, true
	}
	if c, ok := deploymentCondition(d, appsv1.DeploymentProgressing); ok && c.Reason == reasons.ProgressDeadlineExceeded {
		return degraded(reasons.ProgressDeadlineExceeded, c.Message), true
	}
	return Health{}, false
}

func degraded(reason, msg string) Health {
	return Health{Degraded: true, Reason: reason, Message: msg}
}

func deploymentCondition(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) (appsv1.DeploymentCondition, bool) {
	for _, c := range d.Status.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return appsv1.DeploymentCondition{}, false
}

// finding is one pod's problem, ranked.
type finding struct {
	rank   int
	reason string
	pod    string
	msg    string
}

// Container waiting reasons that mean a user must act, and what each is
// reported as: the two image pull states are one problem.
var waitingReasons = map[string]string{
	"ErrImagePull":               reasons.ImagePullBackOff,
	"ImagePullBackOff":           reasons.ImagePullBackOff,
	"InvalidImageName":           reasons.ImagePullBackOff,
	"ErrImageNeverPull":          reasons.ImagePullBackOff,
	"CrashLoopBackOff":           reasons.CrashLoopBackOff,
	"CreateContainerConfigError": "CreateContainerConfigError",
	"CreateContainerError":       "CreateContainerError",
	"RunContainerError":          "RunContainerError",
}

// podTrouble returns the most telling problem among pods (those being
// deleted, and those that ended, an evicted pod say, left out: they are
// replaced, not restarted), counting the pods that share it.
func podTrouble(pods []*corev1.Pod) (Health, bool) {
	var found []finding
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			continue
		}
		if f, ok := podFinding(p); ok {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return Health{}, false
	}
	slices.SortFunc(found, func(a, b finding) int { return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.pod, b.pod)) })
	first, same := found[0], 0
	for _, f := range found {
		if f.reason == first.reason {
			same++
		}
	}
	msg := first.msg
	if same > 1 {
		msg = fmt.Sprintf("%s (and %d more pods)", msg, same-1)
	}
	return degraded(first.reason, msg), true
}

// podFinding is what stops pod p, if anything: a container that cannot
// pull, start or stay up, else the scheduler's refusal.
func podFinding(p *corev1.Pod) (finding, bool) {
	statuses := append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...)
	for i, c := range statuses {
		reason, ok := containerTrouble(c, i < len(p.Status.InitContainerStatuses))
		if !ok {
			continue
		}
		f := finding{reason: reason, pod: p.Name}
		switch reason {
		case reasons.ImagePullBackOff:
			f.rank, f.msg = 1, fmt.Sprintf("pod %s cannot pull image %q (container %s)", p.Name, c.Image, c.Name)
		case reasons.CrashLoopBackOff:
			f.rank, f.msg = 2, fmt.Sprintf("container %s of pod %s keeps exiting%s; restarted with back-off", c.Name, p.Name, lastExit(c))
		default:
			f.rank, f.msg = 1, fmt.Sprintf("container %s of pod %s cannot start: %s", c.Name, p.Name, c.State.Waiting.Message)
		}
		return f, true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return finding{rank: 3, reason: reasons.Unschedulable, pod: p.Name,
				msg: fmt.Sprintf("pod %s cannot be scheduled: %s", p.Name, c.Message)}, true
		}
	}
	return finding{}, false
}

// containerTrouble is what stops container c (an init container when
// init), if anything: a waiting reason a user must act on, or an exit the
// kubelet restarts it from (a worker's container restarts whenever it
// ends; an init container only when it failed). The kubelet shows a
// crashing container in turn as exited, waiting out its back-off
// (CrashLoopBackOff) and running again, not ready, for as long as it
// lasts: all three are one crash loop, so that the judgement does not flip
// with the kubelet's timing (on a loaded node the exited state can last
// for minutes).
func containerTrouble(c corev1.ContainerStatus, init bool) (string, bool) {
	last := c.LastTerminationState.Terminated
	switch s := c.State; {
	case s.Waiting != nil:
		reason, ok := waitingReasons[s.Waiting.Reason]
		return reason, ok
	case s.Terminated != nil && (!init || s.Terminated.ExitCode != 0):
		return reasons.CrashLoopBackOff, true
	case s.Terminated == nil && !c.Ready && c.RestartCount > 0 && last != nil && last.ExitCode != 0:
		return reasons.CrashLoopBackOff, true
	}
	return "", false
}

// lastExit describes how a container last ended: " (last exit code 1,
// Error)", or "" when unknown; an exit it has not been restarted from yet
// counts as its last.
func lastExit(c corev1.ContainerStatus) string {
	t := c.LastTerminationState.Terminated
	if c.State.Terminated != nil {
		t = c.State.Terminated
	}
	if t == nil {
		return ""
	}
	return fmt.Sprintf(" (last exit code %d, %s)", t.ExitCode, cmp.Or(t.Reason, "no reason given"))
}
