package client

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tinyctl/tinyctl/bus/kv"
)

const v1 = `{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"resizer","namespace":"media"},` +
	`"spec":{"image":"acme/resizer:1.0.0","jobs":{"subjects":["jobs.resize"]},"replicas":1}}`

func TestChangesSummariseEachRevision(t *testing.T) {
	v2 := strings.Replace(v1, "1.0.0", "1.1.0", 1)
	v3 := strings.Replace(strings.Replace(v2, `"replicas":1`, `"replicas":2`, 1), `"namespace":"media"}`, `"namespace":"media","labels":{"a":"b"}}`, 1)
	hist := []kv.Entry{
		entry(1, kv.OpPut, v1), entry(2, kv.OpPut, v2), entry(3, kv.OpPut, v3), entry(4, kv.OpPut, v3),
		entry(5, kv.OpDelete, ""), entry(6, kv.OpPut, v1), entry(7, kv.OpPut, "image: [oops"),
	}
	var got []string
	for _, c := range Changes(revisionsOf(hist), 16) {
		got = append(got, c.Operation+" "+c.Image+" "+c.Summary)
	}
	want := []string{
		"put acme/resizer:1.0.0 created",
		"put acme/resizer:1.1.0 spec.image",
		"put acme/resizer:1.1.0 metadata.labels, spec.replicas",
		"put acme/resizer:1.1.0 no change",
		"delete  deleted",
		"put acme/resizer:1.0.0 re-created",
		"put <invalid> invalid: decode component: yaml: line 1: did not find expected ',' or ']'",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	for i, r := range revisionsOf(hist) {
		if want := hist[i].Op != kv.OpPut; r.Deleted != want {
			t.Errorf("revision %d (%s): Deleted %t, want %t", r.Revision, r.Operation, r.Deleted, want)
		}
	}
	if first := Changes(revisionsOf(hist[:2]), 2)[0].Summary; first != "oldest kept revision" {
		t.Errorf("first of a full history: %q, want oldest kept revision", first)
	}
}
