package fleet_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// describedQueues is what `tinyctl describe -o json` says of a queue.
type describedQueues struct {
	QueueError    string
	ClusterQueues []struct {
		Cluster    string
		QueueError string
		Queue      *struct{ Jobs, Pending uint64 }
	}
}

// publishJobs publishes n jobs to subject on c's broker, each stored.
func publishJobs(t *testing.T, c *cluster, subject string, n int) {
	conn := natstest.BusConnect(t, bus.Config{URLs: []string{c.nats.ClientURL()}}, nil)
	for i := range n {
		_, err := conn.JetStream().Publish(testenv.Ctx(t, 10*time.Second), subject, fmt.Appendf(nil, "job %d", i))
		testenv.Must(t, err)
	}
}

// checkQueuesAtTheHub: the hub holds no work queue, so describe there
// asks each cluster that reported for the component's queue on its own
// broker. resizer runs on eu and us, gdpr-export on eu only; each member
// gets its own jobs, and the hub shows each member's count.
func checkQueuesAtTheHub(t *testing.T, hub *bus.Embedded, eu, us *cluster) {
	publishJobs(t, eu, ns+".resizer.jobs", 3)
	publishJobs(t, us, ns+".resizer.jobs", 1)
	publishJobs(t, eu, ns+".gdpr-export.jobs", 2)
	want := map[string]map[string]uint64{"resizer": {"eu-1": 3, "us-1": 1}, "gdpr-export": {"eu-1": 2}}
	for name, jobs := range want {
		testenv.Eventually(t, 20*time.Second, func() error {
			var d describedQueues
			out := tinyctl(t, hub, "describe", name, "-n", ns, "-o", "json")
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				return fmt.Errorf("describe -o json: %w\n%s", err, out)
			}
			if !strings.Contains(d.QueueError, "not found") {
				return fmt.Errorf("the hub's own queue of %s: %q, want it not found there", name, d.QueueError)
			}
			got := map[string]uint64{}
			for _, cq := range d.ClusterQueues {
				if cq.Queue == nil {
					return fmt.Errorf("%s on %s: %s", name, cq.Cluster, cq.QueueError)
				}
				if cq.Queue.Pending != cq.Queue.Jobs {
					return fmt.Errorf("%s on %s: %d jobs, %d pending (no worker runs: want all pending)", name, cq.Cluster, cq.Queue.Jobs, cq.Queue.Pending)
				}
				got[cq.Cluster] = cq.Queue.Jobs
			}
			if fmt.Sprint(got) != fmt.Sprint(jobs) {
				return fmt.Errorf("%s's jobs per cluster at the hub: %v, want %v", name, got, jobs)
			}
			return nil
		})
	}
	// status --queues: one row per component per cluster, each with the
	// queue its cluster's controller reported.
	var list struct {
		Items []struct {
			Name, Cluster string
			Queue         *struct{ Jobs uint64 }
		}
	}
	testenv.Must(t, json.Unmarshal([]byte(tinyctl(t, hub, "status", "-n", ns, "--queues", "-o", "json")), &list))
	got := map[string]uint64{}
	for _, it := range list.Items {
		if it.Queue != nil {
			got[it.Name+"@"+it.Cluster] = it.Queue.Jobs
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(map[string]uint64{"gdpr-export@eu-1": 2, "resizer@eu-1": 3, "resizer@us-1": 1}) {
		t.Errorf("status --queues at the hub: %v (items %+v)", got, list.Items)
	}
	text := tinyctl(t, hub, "describe", "resizer", "-n", ns)
	for _, line := range []string{"Queue on cluster eu-1 (as its controller answered):", "Queue on cluster us-1 (as its controller answered):"} {
		if !strings.Contains(text, line) {
			t.Errorf("describe at the hub does not say %q:\n%s", line, text)
		}
	}
	// A member whose controller does not answer (paused here) is said
	// to be silent; the others are still shown.
	testenv.Must(t, eu.serve.Cmd.Process.Signal(syscall.SIGSTOP))
	defer func() { testenv.Must(t, eu.serve.Cmd.Process.Signal(syscall.SIGCONT)) }()
	var d describedQueues
	testenv.Must(t, json.Unmarshal([]byte(tinyctl(t, hub, "describe", "resizer", "-n", ns, "-o", "json")), &d))
	if len(d.ClusterQueues) != 2 || !strings.Contains(d.ClusterQueues[0].QueueError, "cluster eu-1 did not answer within") ||
		d.ClusterQueues[1].Queue == nil || d.ClusterQueues[1].Queue.Jobs != 1 {
		t.Errorf("resizer at the hub with eu-1's controller paused: %+v", d.ClusterQueues)
	}
}
