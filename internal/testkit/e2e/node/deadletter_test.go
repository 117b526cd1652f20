package node

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// deadLetterRoundTrip publishes one job the worker's pods, as
// deadLettering configured them, fail on every delivery, and follows it
// through the dead letters with the user's CLI: listed after its last
// delivery with the subject and data it was sent with, the work queue
// empty meanwhile, then replayed, failed again by the pods and listed
// again under a new sequence.
func deadLetterRoundTrip(t *testing.T, u *user, producer, obs *observer) {
	t.Helper()
	// Only pods of the new revision may take the job: one of the
	// previous revision would finish it.
	testenv.Eventually(t, 2*time.Minute, func() error {
		for _, p := range podsReady(t, workerNS, "app.kubernetes.io/name="+workerName, 2, 2*time.Minute) {
			if !slices.ContainsFunc(p.Spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "THUMBNAIL_RESULTS" }) {
				return fmt.Errorf("pod %s still runs the revision without THUMBNAIL_RESULTS", p.Name)
			}
		}
		return nil
	})
	const data = `{"image":"s3://bucket/dead.png","sizes":[64]}`
	_, err := producer.js.Publish(context.Background(), "default.thumbnail.small", []byte(data))
	testenv.Must(t, err)

	first := deadJob(t, u, 0, data)
	drained(t, obs, nil, 1)

	r := u.ok(time.Minute, "jobs", "replay", workerName, "-n", workerNS, "--all")
	t.Logf("jobs replay --all: %s", r.stdout)
	again := deadJob(t, u, first.Sequence, data)
	if again.Sequence == first.Sequence {
		t.Errorf("the replayed job is listed under its old sequence %d: it was not replayed", first.Sequence)
	}
}

// deadJob waits until tinyctl jobs dead lists exactly one job, with a
// sequence other than not, sent on default.thumbnail.small with data and
// delivered maxDeliver (3) times, and returns it.
func deadJob(t *testing.T, u *user, not uint64, data string) deadletter.Job {
	t.Helper()
	var job deadletter.Job
	testenv.Eventually(t, 90*time.Second, func() error {
		var list deadletter.ListReply
		r := u.run(time.Minute, "jobs", "dead", workerName, "-n", workerNS, "-o", "json")
		if r.code != 0 {
			return fmt.Errorf("%s", r)
		}
		out := r.stdout
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			return fmt.Errorf("jobs dead -o json printed %q: %v", out, err)
		}
		if list.Total != 1 || len(list.Jobs) != 1 || list.Jobs[0].Sequence == not {
			return fmt.Errorf("jobs dead: %s, want one job other than sequence %d", out, not)
		}
		job = list.Jobs[0]
		if job.Subject != "default.thumbnail.small" || string(job.Data) != data || job.Deliveries != 3 {
			return fmt.Errorf("dead job: subject %s, data %q, %d deliveries; want default.thumbnail.small, %q, 3", job.Subject, job.Data, job.Deliveries, data)
		}
		return nil
	})
	return job
}
