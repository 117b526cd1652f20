package client

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tinyctl/tinyctl/bus/kv"
)

func TestRemovalNamesChildrenAndStreamPolicy(t *testing.T) {
	scaled := strings.Replace(v1, `"replicas":1`, `"scaling":{"maxReplicas":5},"deletion":{"stream":"Delete"}`, 1)
	tests := []struct {
		name       string
		value      string
		purge      bool
		wantLines  []string
		wantPolicy string
	}{
		{"fixed replicas, stream retained", v1, false, []string{
			"Component media.resizer (revision 7) will be deleted.",
			"The controller then removes:",
			"  Deployment/media/resizer",
			"  NetworkPolicy/media/resizer",
			"  Secret/media/resizer-nats (if the cluster mints credentials)",
			"The stream tinyctl_media_resizer and its consumer tinyctl_media_resizer_worker are kept with any queued jobs (spec.deletion.stream: Retain).",
		}, "Retain"},
		{"scaled, stream deleted, purge", scaled, true, []string{
			"Component media.resizer (revision 7) will be purged (its history is erased too: it cannot be rolled back).",
			"The controller then removes:",
			"  ScaledObject/media/resizer",
			"  PodDisruptionBudget/media/resizer", // up to 3 pods
			"  Deployment/media/resizer",
			"  NetworkPolicy/media/resizer",
			"  Secret/media/resizer-nats (if the cluster mints credentials)",
			"The stream tinyctl_media_resizer and its consumer tinyctl_media_resizer_worker are kept with any queued jobs: the purge erases the spec that asks for them to go (spec.deletion.stream: Delete); delete without --purge to remove them too.",
		}, "Delete"},
		{"value that does not decode", "{", false, []string{
			"Component media.resizer (revision 7) will be deleted.",
			"Its stored value cannot be read (decode component: yaml: line 1: did not find expected node content), so its objects are named from its key.",
			"The controller then removes:",
			"  ScaledObject/media/resizer (if any)",
			"  PodDisruptionBudget/media/resizer (if any)",
			"  Deployment/media/resizer",
			"  NetworkPolicy/media/resizer",
			"  Secret/media/resizer-nats (if the cluster mints credentials)",
			"The stream tinyctl_media_resizer and its consumer tinyctl_media_resizer_worker are kept with any queued jobs (spec.deletion.stream: Retain).",
		}, "Retain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := PlanRemoval(revisionOf(entry(7, kv.OpPut, tt.value)))
			var b bytes.Buffer
			r.Describe(&b, tt.purge)
			if diff := cmp.Diff(tt.wantLines, strings.Split(strings.TrimSpace(b.String()), "\n")); diff != "" {
				t.Errorf("description (-want +got):\n%s", diff)
			}
			if r.StreamPolicy != tt.wantPolicy {
				t.Errorf("policy %q, want %q", r.StreamPolicy, tt.wantPolicy)
			}
		})
	}
}
