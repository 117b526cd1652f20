package provision

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// instanceLabel is the label Helm charts put on a release's objects.
const instanceLabel = "app.kubernetes.io/instance"

// whyNotReady explains, one line each, why the pods and claims of release
// name in ns are not ready: a pod's unmet condition, each container
// waiting or crashing (with its last exit), and the Warning events about
// them. It returns "" when nothing is wrong or nothing can be read; it
// runs on its own short deadline, since the caller's has often passed.
func (p *Provisioner) whyNotReady(ctx context.Context, ns, name string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	sel := metav1.ListOptions{LabelSelector: labels.Set{instanceLabel: name}.String()}
	pods, err := p.kube.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		return ""
	}
	claims, _ := p.kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, sel)
	events := p.warnings(ctx, ns)
	var lines []string
	for _, pod := range pods.Items {
		lines = append(lines, podProblems(pod, events)...)
	}
	if claims != nil {
		for _, c := range claims.Items {
			if c.Status.Phase != corev1.ClaimBound {
				lines = append(lines, fmt.Sprintf("PersistentVolumeClaim/%s/%s is %s%s", ns, c.Name, c.Status.Phase, events.about("PersistentVolumeClaim", c.Name)))
			}
		}
	}
	if len(pods.Items) == 0 {
		lines = append(lines, fmt.Sprintf("no pods of release %s exist%s", name, events.prefixed(name)))
	}
	if len(lines) == 0 {
		return ""
	}
	return "not ready:\n  " + strings.Join(lines, "\n  ")
}

// podProblems describes what keeps one pod from being ready.
func podProblems(pod corev1.Pod, events warningEvents) []string {
	ref := "Pod/" + pod.Namespace + "/" + pod.Name
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return nil
		}
	}
	var out []string
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			out = append(out, fmt.Sprintf("%s is %s, not scheduled: %s: %s", ref, pod.Status.Phase, c.Reason, c.Message))
		}
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if line := containerProblem(cs); line != "" {
			out = append(out, fmt.Sprintf("%s container %s %s", ref, cs.Name, line))
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("%s is %s and not ready", ref, pod.Status.Phase))
	}
	out[len(out)-1] += events.about("Pod", pod.Name)
	return out
}

// containerProblem describes a container that is not ready: waiting (and
// why), or its last exit when it restarts.
func containerProblem(cs corev1.ContainerStatus) string {
	if cs.Ready {
		return ""
	}
	var b strings.Builder
	switch {
	case cs.State.Waiting != nil:
		fmt.Fprintf(&b, "is waiting: %s", cs.State.Waiting.Reason)
		if m := cs.State.Waiting.Message; m != "" {
			fmt.Fprintf(&b, ": %s", m)
		}
	case cs.State.Running != nil:
		b.WriteString("is running but not ready (its readiness probe fails)")
	case cs.State.Terminated != nil:
		fmt.Fprintf(&b, "exited with code %d (%s)", cs.State.Terminated.ExitCode, cs.State.Terminated.Reason)
	default:
		b.WriteString("has not started")
	}
	if t := cs.LastTerminationState.Terminated; t != nil && cs.RestartCount > 0 {
		fmt.Fprintf(&b, "; restarted %d times, last exit code %d (%s)", cs.RestartCount, t.ExitCode, t.Reason)
		if m := strings.TrimSpace(t.Message); m != "" {
			fmt.Fprintf(&b, ": %s", lastLine(m))
		}
	}
	return b.String()
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// warningEvents are a namespace's Warning events, newest last.
type warningEvents []corev1.Event

func (p *Provisioner) warnings(ctx context.Context, ns string) warningEvents {
	list, err := p.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "type=" + corev1.EventTypeWarning})
	if err != nil {
		return nil
	}
	ev := warningEvents(list.Items)
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].LastTimestamp.Before(&ev[j].LastTimestamp) })
	return ev
}

// about renders the newest distinct messages (at most three) of the
// events about kind/name, as a suffix: "; events: reason: message, ...".
func (ev warningEvents) about(kind, name string) string {
	return ev.render(func(e corev1.Event) bool { return e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name })
}

// prefixed is about for every workload object whose name starts with
// prefix (a release's Deployments, StatefulSets and ReplicaSets).
func (ev warningEvents) prefixed(prefix string) string {
	return ev.render(func(e corev1.Event) bool {
		switch e.InvolvedObject.Kind {
		case "Deployment", "StatefulSet", "ReplicaSet":
			return strings.HasPrefix(e.InvolvedObject.Name, prefix)
		}
		return false
	})
}

func (ev warningEvents) render(match func(corev1.Event) bool) string {
	var msgs []string
	seen := map[string]bool{}
	for i := len(ev) - 1; i >= 0 && len(msgs) < 3; i-- {
		e := ev[i]
		m := e.Reason + ": " + strings.TrimSpace(e.Message)
		if match(e) && !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return "; events: " + strings.Join(msgs, " | ")
}
