package main

import (
	"context"
	"strings"
	"testing"
)

func TestDeleteShowsWhatGoesAndNeedsConfirmation(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	scaled := strings.Replace(component("media", "resizer", "acme/resizer:1.0.0"), "  jobs:", "  scaling: {maxReplicas: 3}\n  jobs:", 1)
	u.must("apply", "-f", u.file("c.yaml", scaled))
	plan := []string{
		"Component media.resizer (revision 1) will be deleted.\n",
		"The controller then removes:\n  ScaledObject/media/resizer\n  PodDisruptionBudget/media/resizer\n  Deployment/media/resizer\n  NetworkPolicy/media/resizer\n  Secret/media/resizer-nats (if the cluster mints credentials)\n",
		"The stream tinyctl_media_resizer and its consumer tinyctl_media_resizer_worker are kept with any queued jobs (spec.deletion.stream: Retain).\n",
	}

	r := u.run("delete", "resizer", "-n", "media")
	expect(t, r, 2, plan, []string{"Error: refusing to delete component media.resizer without confirmation: standard input is not a terminal; pass --yes to delete from a script\n"})
	if _, err := u.specs("tinyctl-components").Get(context.Background(), "media.resizer"); err != nil {
		t.Fatalf("refused delete removed the component: %v", err)
	}

	r = u.run("delete", "resizer", "-n", "media", "--yes")
	expect(t, r, 0, append(plan, "component/media.resizer deleted\n"), nil)
	expect(t, u.run("get", "resizer", "-n", "media"), 1, nil, []string{`Error: component "resizer" not found in namespace "media"`})

	// A delete is a marker: the history stays and rollback undeletes.
	hist := u.must("history", "resizer", "-n", "media").stdout
	if rows := historyRows(t, hist); len(rows) != 2 || rows[1] != "2 delete - deleted" {
		t.Errorf("history after delete:\n%s", hist)
	}
	expect(t, u.run("rollback", "resizer", "-n", "media"), 0, []string{"component/media.resizer rolled back to revision 1 (new revision 3)\n"}, nil)
	expect(t, u.run("delete", "nope", "-n", "media", "--yes"), 1, nil, []string{`Error: component "nope" not found in namespace "media"` + "\n"})
}

func TestDeletePurgeErasesHistory(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	u.must("apply", "-f", u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0")))
	r := u.run("delete", "resizer", "-n", "media", "--purge", "--yes")
	expect(t, r, 0, []string{"will be purged (its history is erased too: it cannot be rolled back)", "component/media.resizer purged\n"}, nil)
	hist := u.must("history", "resizer", "-n", "media").stdout
	if rows := historyRows(t, hist); len(rows) != 1 || rows[0] != "2 purge - purged" {
		t.Errorf("history after purge:\n%s", hist)
	}
}

func TestDeleteByFileDeletesWhatTheDocumentsName(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	both := u.file("both.yaml", component("media", "resizer", "acme/resizer:1.0.0")+"---\n"+component("media", "thumbs", "acme/thumbs:1.0.0"))
	u.must("apply", "-f", both)
	other := u.file("other.yaml", component("media", "nope", "acme/nope:1.0.0"))

	expect(t, u.run("delete", "resizer", "-f", both), 2, nil, []string{"Error: give a component NAME or -f, not both\n"})
	expect(t, u.run("delete"), 2, nil, []string{"Error: give the NAME of the component to delete, or -f FILE|DIR|-\n"})
	expect(t, u.run("delete", "-f", both), 2, []string{"Component media.resizer (revision 1) will be deleted.", "Component media.thumbs (revision 2) will be deleted."},
		[]string{"Error: refusing to delete 2 components without confirmation: standard input is not a terminal; pass --yes to delete from a script\n"})
	expect(t, u.run("delete", "-f", both, "-f", other, "--yes"), 1, nil, []string{`Error: component "nope" not found in namespace "media"; nothing was deleted` + "\n"})
	for _, name := range []string{"resizer", "thumbs"} {
		u.must("get", name, "-n", "media")
	}
	expect(t, u.run("delete", "-f", both, "--yes"), 0, []string{"component/media.resizer deleted\ncomponent/media.thumbs deleted\n"}, nil)
	for _, name := range []string{"resizer", "thumbs"} {
		expect(t, u.run("get", name, "-n", "media"), 1, nil, []string{`Error: component "` + name + `" not found in namespace "media"`})
	}
}
