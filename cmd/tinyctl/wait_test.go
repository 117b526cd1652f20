package main

import (
	"strings"
	"testing"
)

// TestApplyWaitSaysWhatEachClusterReports: on an API server that runs no
// pods (no Deployment controller, no kubelet), a component is applied but
// never Ready. apply --wait says so per cluster and exits 1 at its
// timeout; status --wait-for=Applied succeeds; a component the cluster
// refuses for good fails the wait at once rather than at the timeout; and
// with no controller running the wait names the missing cluster.
func TestApplyWaitSaysWhatEachClusterReports(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	ns := kube.RestrictedNamespace(t)

	// No cluster yet: nothing can be waited on.
	f := u.file("c.yaml", component(ns, "worker", "registry.example.com/acme/worker:1"))
	r := u.run("apply", "-f", f, "--wait", "--timeout", "2s")
	expect(t, r, 1, []string{"component/" + ns + ".worker created (revision 1)"},
		[]string{"timed out after 2s waiting for Ready", ns + ".worker: NoCluster: no live cluster"})

	u.serveFor(ns)
	r = u.run("status", "worker", "-n", ns, "--wait-for=applied", "--timeout", "30s")
	expect(t, r, 0, []string{"component/" + ns + ".worker Applied on cluster " + e2eCluster + " (revision 1)"}, nil)

	u.file("c.yaml", component(ns, "worker", "registry.example.com/acme/worker:2"))
	r = u.run("apply", "-f", f, "--wait", "--timeout", "3s")
	expect(t, r, 1, []string{"component/" + ns + ".worker configured (revision 2)"}, []string{
		"timed out after 3s waiting for Ready",
		ns + ".worker on cluster " + e2eCluster + ": Progressing: waiting for the Deployment controller to observe generation 2",
	})
	if strings.Contains(r.stdout, "Ready on cluster") {
		t.Errorf("apply --wait reported Ready on a cluster that runs no pods:\n%s", r)
	}

	// A namespace this controller does not manage: Stalled, so the wait
	// ends without waiting for its timeout.
	other := kube.RestrictedNamespace(t)
	g := u.file("other.yaml", component(other, "elsewhere", "registry.example.com/acme/worker:1"))
	r = u.run("apply", "-f", g, "--wait", "--timeout", "50s")
	expect(t, r, 1, nil, []string{"Ready will not become true without a new revision",
		other + ".elsewhere on cluster " + e2eCluster + ": NamespaceNotAllowed"})

	expect(t, u.run("status", "worker", "-n", ns, "--wait-for=Running"), 2, nil,
		[]string{`--wait-for must be Ready or Applied, not "Running"`})
	expect(t, u.run("apply", "-f", f, "--wait", "--dry-run"), 2, nil, []string{"--wait cannot be used with --dry-run"})
}
