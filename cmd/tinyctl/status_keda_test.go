package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestStatusWarnsWhenScaledComponentsHaveNoKEDA runs a real controller
// that looks for KEDA's operator by a label unique to this test: while no
// operator runs, `tinyctl status` (which reads only NATS) warns about the
// scaled component and not the plain one; once an operator Deployment has
// an available replica, the warning goes.
func TestStatusWarnsWhenScaledComponentsHaveNoKEDA(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	ns := kube.RestrictedNamespace(t)
	run := strings.ToLower(rand.Text()[:8])
	p := testenv.Serve(t, binary, "--nats-url", u.nats.URL(), "--kubeconfig", kube.Kubeconfig, "--namespaces", ns,
		"--cluster-name", e2eCluster, "--lease-ttl", "3s", "--heartbeat-ttl", "3s", "--recheck", "500ms", "--log-format", "json",
		"--keda-operator-selector", "app.kubernetes.io/name=keda-operator,tinyctl.io/test-run="+run)
	p.WaitReady(t, "leader", 30*time.Second)
	u.must("apply", "-f", u.file("c.yaml", scaledComponent(ns, "scaled", "5")+"---\n"+component(ns, "plain", "acme/plain:1.0.0")))

	warning := "cluster " + e2eCluster + " runs no KEDA operator"
	stderr := func() string { return u.must("status", "-n", ns).stderr }
	testenv.Eventually(t, 30*time.Second, func() error {
		if e := stderr(); !strings.Contains(e, warning) || !strings.Contains(e, ns+"/scaled") || strings.Contains(e, ns+"/plain") {
			return fmt.Errorf("status stderr = %q, want a warning naming %s/scaled only", e, ns)
		}
		return nil
	})

	startKEDAOperator(t, run)
	testenv.Eventually(t, 30*time.Second, func() error {
		if e := stderr(); strings.Contains(e, "KEDA") {
			return fmt.Errorf("status still warns with a KEDA operator running: %q", e)
		}
		return nil
	})
}

// startKEDAOperator creates a Deployment labelled as KEDA's operator (and
// with this test's run label) and reports one available replica, as the
// Deployment controller would for a running operator.
func startKEDAOperator(t *testing.T, run string) {
	t.Helper()
	ns := kube.Namespace(t, nil)
	labels := map[string]string{"app.kubernetes.io/name": "keda-operator", "tinyctl.io/test-run": run}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "keda-operator", Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "keda-operator", Image: "ghcr.io/kedacore/keda:2.21.1"}}}}},
	}
	deps := kube.Clientset(t).AppsV1().Deployments(ns)
	ctx := context.Background()
	d, err := deps.Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	if _, err := deps.UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
