package node

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestInstallWaitSaysWhyPodsAreNotReady installs a second runtime whose
// broker asks for a claim the cluster cannot bind (--broker-storage pvc on
// a cluster without a StorageClass): --wait fails, naming the pod, the
// claim and the scheduler's reason, instead of only a deadline. Uninstall
// then removes it.
func TestInstallWaitSaysWhyPodsAreNotReady(t *testing.T) {
	u := newUser(t)
	const ns = "wait-e2e"
	r := u.run(3*time.Minute, "install", "--runtime-namespace", ns, "--broker-storage", "pvc", "--broker-auth", "token",
		"--without-collector", "--skip-crds", "--wait", "--timeout", "20s")
	if r.code == 0 {
		t.Fatalf("install with an unbindable claim succeeded:\n%s", r)
	}
	for _, want := range []string{
		"Release/" + ns + "/nats: context deadline exceeded",
		"Pod/" + ns + "/nats-0 is Pending, not scheduled: Unschedulable",
		"unbound immediate PersistentVolumeClaims",
		"PersistentVolumeClaim/" + ns + "/data-nats-0 is Pending",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("install --wait does not say %q:\n%s", want, r)
		}
	}
	u.ok(3*time.Minute, "uninstall", "--runtime-namespace", ns)
	gone(t, "namespace "+ns, 2*time.Minute, func() error {
		_, err := clientset(t).CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
		return err
	})
}
