package fleet_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// tinyctlAt runs the CLI against a NATS server and returns its standard
// output and error.
func tinyctlAt(t *testing.T, server *bus.Embedded, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary, append(args, "--nats-url", server.ClientURL(), "--nats-context", "")...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return string(out), stderr.String(), err
}

// clusterItems runs `tinyctl clusters -o json` against a NATS server and
// returns its items by name.
func clusterItems(t *testing.T, server *bus.Embedded) map[string]map[string]any {
	t.Helper()
	out, stderr, err := tinyctlAt(t, server, "clusters", "-o", "json")
	if err != nil {
		t.Fatalf("tinyctl clusters: %v\n%s", err, stderr)
	}
	var list struct{ Items []map[string]any }
	testenv.Must(t, json.Unmarshal([]byte(out), &list))
	items := map[string]map[string]any{}
	for _, it := range list.Items {
		items[it["name"].(string)] = it
	}
	return items
}

// Two Kubernetes clusters given one name: the second cannot join the
// fleet under it, and its controller, which reads the hub's heartbeat of
// its name, reports the other cluster (its heartbeat, its metric, and
// `tinyctl clusters` against its NATS); the first reports nothing.
func TestASecondClusterUnderATakenNameIsRefusedAndSaysSo(t *testing.T) {
	hub := startHub(t)
	first := startCluster(t, hub, kubes[0], "eu-7", "")
	tinyctl(t, hub, "fleet", "join", "eu-7")
	first.start(t)
	testenv.Eventually(t, 20*time.Second, func() error {
		if it := clusterItems(t, hub)["eu-7"]; it == nil || it["stale"] != false {
			return fmt.Errorf("the hub holds no live heartbeat of eu-7: %v", it)
		}
		return nil
	})

	second := startCluster(t, hub, kubes[1], "eu-7b", "") // its broker's domain is eu-7b
	_, stderr, err := tinyctlAt(t, hub, "fleet", "join", "eu-7", "--domain", "eu-7b")
	if err == nil || !strings.Contains(stderr, "two clusters cannot share a name") {
		t.Fatalf("joining a second eu-7 from domain eu-7b: %v\n%s\nwant it refused", err, stderr)
	}
	second.name = "eu-7" // its controller started under the taken name all the same
	second.start(t)

	var conflict string
	testenv.Eventually(t, 20*time.Second, func() error {
		conflict, _ = clusterItems(t, second.nats)["eu-7"]["conflict"].(string)
		if conflict == "" {
			return errors.New("the second eu-7 does not report the first")
		}
		return nil
	})
	firstID := clusterItems(t, first.nats)["eu-7"]["clusterID"]
	secondID := clusterItems(t, second.nats)["eu-7"]["clusterID"]
	if firstID == nil || firstID == secondID || !strings.Contains(conflict, fmt.Sprintf("(id %s,", firstID)) {
		t.Errorf("the conflict %q should name the first eu-7's cluster id %v (the second's is %v)", conflict, firstID, secondID)
	}
	if _, stderr, err := tinyctlAt(t, second.nats, "clusters"); err != nil || !strings.Contains(stderr, "cluster eu-7: another Kubernetes cluster") {
		t.Errorf("tinyctl clusters against the second eu-7's NATS warns %q (%v), want the conflict", stderr, err)
	}
	if _, body, err := testenv.HTTPGet(second.serve.MetricsAddr, "/metrics"); err != nil || !strings.Contains(body, "tinyctl_cluster_name_conflict 1") {
		t.Errorf("the second eu-7's controller does not export tinyctl_cluster_name_conflict 1 (%v)", err)
	}
	if c := clusterItems(t, first.nats)["eu-7"]["conflict"]; c != nil {
		t.Errorf("the first eu-7 reports a conflict it is not party to: %v", c)
	}
	if _, body, err := testenv.HTTPGet(first.serve.MetricsAddr, "/metrics"); err != nil || !strings.Contains(body, "tinyctl_cluster_name_conflict 0") {
		t.Errorf("the first eu-7's controller does not export tinyctl_cluster_name_conflict 0 (%v)", err)
	}
}
