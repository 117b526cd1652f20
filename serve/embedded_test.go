package serve_test

import (
	"net"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestEmbeddedNATSRunsEverythingInOneProcess is the single-binary setup:
// `serve --embedded-nats` is the broker too, and a spec published to it is
// reconciled.
func TestEmbeddedNATSRunsEverythingInOneProcess(t *testing.T) {
	addr := testenv.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	ns := kube.RestrictedNamespace(t)
	p := testenv.Serve(t, binary, "--embedded-nats", "--embedded-nats-port", port,
		"--embedded-nats-monitor-port", "0", "--embedded-nats-store", t.TempDir(),
		"--kubeconfig", kube.Kubeconfig, "--namespaces", ns, "--cluster-name", "solo",
		"--lease-ttl", "3s", "--log-format", "json")
	p.WaitReady(t, "leader", 30*time.Second)

	f := fixtureAt(t, "nats://"+addr, ns)
	f.publish("solo", img+"1")
	f.waitImage("solo", img+"1")
}
