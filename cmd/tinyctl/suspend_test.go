package main

import (
	"strings"
	"testing"
)

// A user suspends a component, sees it in status and in the spec, resumes
// it on one cluster and everywhere; suspending twice changes nothing.
func TestSuspendAndResume(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	ns := kube.RestrictedNamespace(t)
	u.serveFor(ns)
	u.must("apply", "-f", u.file("c.yaml", component(ns, "worker", "registry.example.com/acme/worker:1")))
	u.waitStatus(ns, ns+" worker "+e2eCluster+" False Progressing 1/1 live")

	expect(t, u.must("suspend", "worker", "-n", ns), 0, []string{"component/" + ns + ".worker suspended (revision 2)\n"}, nil)
	u.waitStatus(ns, ns+" worker "+e2eCluster+" False Suspended 1/2 live")
	expect(t, u.run("get", "worker", "-n", ns), 0, []string{"  suspend: true\n"}, nil)
	expect(t, u.must("suspend", "worker", "-n", ns), 0, []string{"component/" + ns + ".worker already suspended (revision 2)\n"}, nil)

	// Resumed on this cluster only: an override, and the component is
	// reconciled here again.
	expect(t, u.must("resume", "worker", "-n", ns, "--cluster", e2eCluster), 0,
		[]string{"component/" + ns + ".worker resumed on cluster " + e2eCluster + " (revision 3)\n"}, nil)
	u.waitStatus(ns, ns+" worker "+e2eCluster+" False Progressing 3/3 live")
	got := u.run("get", "worker", "-n", ns).stdout
	if !strings.Contains(got, "  suspend: true\n") || !strings.Contains(got, "\n    suspend: false\n") {
		t.Errorf("after resume --cluster, the spec should stay suspended with an override resuming %s:\n%s", e2eCluster, got)
	}
	expect(t, u.must("resume", "worker", "-n", ns), 0, []string{"component/" + ns + ".worker resumed (revision 4)\n"}, nil)
	if got := u.run("get", "worker", "-n", ns).stdout; strings.Contains(got, "suspend") || strings.Contains(got, "overrides") {
		t.Errorf("after resume, nothing of the suspension should stay in the spec:\n%s", got)
	}
	expect(t, u.run("suspend", "nope", "-n", ns), 1, nil, []string{`Error: component "nope" not found in namespace "` + ns + `"` + "\n"})
}
