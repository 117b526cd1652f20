package statusview

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/client/queues"
)

// TestDescribeShowsEachClustersQueue: at a fleet hub, which holds no
// queue, describe shows each cluster's as its controller answered, and
// says why one is missing.
func TestDescribeShowsEachClustersQueue(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	d := Description{Key: "media.resizer", QueueError: "stream tinyctl_media_resizer: not found on this broker"}
	d = d.WithClusterQueue("eu-1", QueueReading{Queue: queues.Queue{Jobs: 3, Bytes: 30, Pending: 2, AckPending: 1, Oldest: now.Add(-90 * time.Second), MaxDeliver: 5}})
	d = d.WithClusterQueue("us-1", QueueReading{Err: errors.New("queue of media.resizer on us-1: no controller of cluster us-1 answered")})
	var out strings.Builder
	writeQueue(&out, d, now)
	got := out.String()
	for _, want := range []string{
		"Queue (on the broker this command reached):\n  stream tinyctl_media_resizer: not found on this broker\n",
		"Queue on cluster eu-1 (as its controller answered):\n",
		"3 (30 B), the oldest published 90s ago",
		"2 not yet handed to a worker",
		"Queue on cluster us-1 (as its controller answered):\n  queue of media.resizer on us-1: no controller of cluster us-1 answered\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("describe's queue section lacks %q:\n%s", want, got)
		}
	}
}
