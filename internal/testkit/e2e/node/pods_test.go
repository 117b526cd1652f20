package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api/workerenv"
	"github.com/tinyctl/tinyctl/internal/localnode"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision/keyring"
)

// ledger is a component of the example worker that takes what a real
// workload takes from its namespace: THUMBNAIL_WORK (how long a job
// takes; the worker exits at start when it is not a duration) from a
// Secret, every key of a ConfigMap as variables, a Secret and a ConfigMap
// mounted read-only, registry credentials, a node selector, a toleration
// and a termination grace period.
const ledger = `apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata:
  name: ledger
  namespace: default
spec:
  image: ` + localnode.ExampleWorkerImage + `
  env:
    - name: THUMBNAIL_WORK
      valueFrom: {secretKeyRef: {name: ledger-work, key: work}}
  envFrom:
    - {prefix: LEDGER_, configMapRef: {name: ledger-settings}}
  volumes:
    - {name: tls, mountPath: /etc/ledger/tls, secret: {name: ledger-tls}, items: [{key: ca.crt, path: ca.pem}]}
    - {name: rules, mountPath: /etc/ledger/rules, configMap: {name: ledger-rules}}
  imagePullSecrets: [{name: ledger-registry}]
  nodeSelector: {kubernetes.io/os: linux}
  tolerations: [{key: example.com/batch, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 40
  replicas: 1
  resources:
    requests: {cpu: 10m, memory: 16Mi}
    limits: {memory: 128Mi}
  jobs:
    subjects: ["default.ledger.*"]
  egress: none
  deletion: {stream: Delete}
`

// TestAWorkerReadsItsSecretsOnARealNode applies ledger, in the namespace
// the install test made enforce restricted Pod Security, before the
// Secret its THUMBNAIL_WORK comes from exists: status says so with the
// kubelet's words and apply --wait exits 1. Once the Secret is created
// the pod runs (so the value reached the worker), with the mounts
// read-only and the drain 5 seconds inside the grace period; the value
// never appears in the spec bucket.
func TestAWorkerReadsItsSecretsOnARealNode(t *testing.T) {
	u := newUser(t)
	u.ok(5*time.Minute, "install", "--wait", "--timeout", "3m") // a no-op after the install test
	u.file("publisher.creds", string(secretData(t, runtimeNS, keyring.PublisherSecret, keyring.PublisherCredsKey)))
	u.env = append(u.env, "TINYCTL_NATS_URL="+brokerURL(t), "TINYCTL_NATS_CREDS="+u.dir+"/publisher.creds")
	ctx, cs := context.Background(), clientset(t)
	// As the install test leaves it (this test may run alone): the
	// namespace enforces restricted Pod Security, so a pod that broke it
	// would never be created.
	ns, err := cs.CoreV1().Namespaces().Get(ctx, workerNS, metav1.GetOptions{})
	testenv.Must(t, err)
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
		_, err = cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
		testenv.Must(t, err)
	}
	objects := []string{"ledger-work", "ledger-tls", "ledger-registry"}
	t.Cleanup(func() {
		u.run(time.Minute, "delete", "ledger", "-n", "default", "--yes")
		for _, name := range objects {
			_ = cs.CoreV1().Secrets(workerNS).Delete(ctx, name, metav1.DeleteOptions{})
		}
		for _, name := range []string{"ledger-settings", "ledger-rules"} {
			_ = cs.CoreV1().ConfigMaps(workerNS).Delete(ctx, name, metav1.DeleteOptions{})
		}
	})
	create := func(obj any) {
		t.Helper()
		var err error
		switch o := obj.(type) {
		case *corev1.Secret:
			_, err = cs.CoreV1().Secrets(workerNS).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = cs.CoreV1().ConfigMaps(workerNS).Create(ctx, o, metav1.CreateOptions{})
		}
		testenv.Must(t, err)
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: workerNS} }
	create(&corev1.Secret{ObjectMeta: meta("ledger-tls"), StringData: map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----"}})
	create(&corev1.Secret{ObjectMeta: meta("ledger-registry"), Type: corev1.SecretTypeDockerConfigJson,
		StringData: map[string]string{corev1.DockerConfigJsonKey: `{"auths":{}}`}})
	create(&corev1.ConfigMap{ObjectMeta: meta("ledger-settings"), Data: map[string]string{"MODE": "strict"}})
	create(&corev1.ConfigMap{ObjectMeta: meta("ledger-rules"), Data: map[string]string{"rules.yaml": "max: 10"}})

	spec := u.file("ledger.yaml", ledger)
	r := u.run(2*time.Minute, "apply", "-f", spec, "--wait", "--timeout", "30s")
	if r.code != 1 || !strings.Contains(r.stderr, "CreateContainerConfigError") || !strings.Contains(r.stderr, `secret "ledger-work" not found`) {
		t.Errorf("apply --wait before the Secret exists: want exit 1 naming CreateContainerConfigError and the Secret\n%s", r)
	}
	t.Logf("apply --wait before the Secret exists (exit %d):\n%s", r.code, r.stderr)
	st := degraded(t, u, "ledger", "CreateContainerConfigError")
	t.Logf("status: %s: %s", st.Reason, st.Message)
	if !strings.Contains(st.Message, `secret "ledger-work" not found`) {
		t.Errorf("status message %q does not name the missing Secret", st.Message)
	}

	created := time.Now()
	create(&corev1.Secret{ObjectMeta: meta("ledger-work"), StringData: map[string]string{"work": "5ms"}})
	pods := podsReady(t, workerNS, "app.kubernetes.io/name=ledger", 1, 3*time.Minute)
	t.Logf("the pod was ready %s after the Secret was created", time.Since(created).Round(100*time.Millisecond))
	testenv.Eventually(t, time.Minute, func() error {
		if it := statusOf(t, u, "ledger"); it.Ready != "True" {
			return fmt.Errorf("ledger: ready %s reason %s: %s", it.Ready, it.Reason, it.Message)
		}
		return nil
	})
	pod := pods[0]
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g != 40 {
		t.Errorf("pod terminationGracePeriodSeconds = %v, want 40", g)
	}
	ctr := pod.Spec.Containers[0]
	if !hasEnv(ctr.Env, workerenv.DrainGrace, "35s") {
		t.Errorf("the worker does not drain 5s inside the grace period: %v", ctr.Env)
	}
	mounts := 0
	for _, m := range ctr.VolumeMounts {
		if strings.HasPrefix(m.MountPath, "/etc/ledger/") {
			mounts++
			if !m.ReadOnly {
				t.Errorf("%s is mounted writable", m.MountPath)
			}
		}
	}
	if mounts != 2 {
		t.Errorf("the pod has %d of the component's 2 mounts: %v", mounts, ctr.VolumeMounts)
	}
	if len(pod.Spec.ImagePullSecrets) != 1 || pod.Spec.ImagePullSecrets[0].Name != "ledger-registry" {
		t.Errorf("imagePullSecrets = %v", pod.Spec.ImagePullSecrets)
	}
	// The Secret's value is referenced, never copied: get shows the reference.
	if got := u.ok(time.Minute, "get", "ledger", "-n", "default", "-o", "yaml").stdout; strings.Contains(got, "5ms") ||
		!strings.Contains(got, "secretKeyRef") {
		t.Errorf("the stored spec does not hold only the reference:\n%s", got)
	}
}
