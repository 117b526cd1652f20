package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api"
)

// orphaned is the status a controller writes for children whose spec is
// missing from the bucket.
func orphaned(key, cluster string, kids ...api.Child) api.Status {
	return api.Status{Component: key, Cluster: cluster, Children: kids, Conditions: []api.Condition{{
		Type: "Orphaned", Status: "True", Reason: "SpecMissing", Message: "children exist but the spec bucket holds nothing for this key",
		LastTransitionTime: time.Now().Add(-5 * time.Minute).UTC(),
	}}}
}

func TestOrphansListsChildrenWithoutASpecAndSaysWhatToDo(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	expect(t, u.run("orphans", "-A"), 0, nil, []string{"No orphans in any namespace.\n"})

	u.must("apply", "-f", u.file("c.yaml", component("media", "cropper", "acme/cropper:1.0.0")))
	s := u.statuses()
	report(t, s, ready("media.cropper", "east", 1, "True", "Reconciled")) // not an orphan
	report(t, s, orphaned("media.resizer", "east",
		api.Child{Kind: "Deployment", Namespace: "media", Name: "resizer"},
		api.Child{Kind: "NetworkPolicy", Namespace: "media", Name: "resizer"}))
	report(t, s, orphaned("web.hook", "west", api.Child{Kind: "Deployment", Namespace: "web", Name: "hook"}))
	beat(t, s, "east", time.Minute)

	// The statuses were orphaned 5 minutes before they were written; AGE
	// says 5m, plus the seconds a loaded machine took to get here (5m1s),
	// or 6m when a minute boundary falls before the run.
	r := u.must("orphans", "-A")
	got := tableRows(r.stdout, 4)
	want := []string{
		"NAMESPACE NAME CLUSTER CHILDREN HEARTBEAT",
		"media resizer east Deployment/resizer,NetworkPolicy/resizer live",
		"web hook west Deployment/hook stale",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("orphans -A:\n%s\nwant (without AGE):\n%s", r.stdout, strings.Join(want, "\n"))
	}
	for _, row := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		if age := strings.Fields(row)[4]; !regexp.MustCompile(`^[56]m([0-9]+s)?$`).MatchString(age) {
			t.Errorf("orphan AGE %q, want 5m (or 5m and some seconds, or 6m):\n%s", age, r.stdout)
		}
	}
	expect(t, r, 0, nil, []string{
		"media.resizer in cluster east: publish its spec again (tinyctl apply -f FILE) and the controller adopts these children, " +
			"or delete them by hand: kubectl delete -n media deployment/resizer networkpolicy/resizer\n",
		"web.hook in cluster west: publish its spec again (tinyctl apply -f FILE) and the controller adopts these children, " +
			"or delete them by hand: kubectl delete -n web deployment/hook\n",
	})
	// The namespace is selected as everywhere else.
	if got := tableRows(u.must("orphans", "-n", "web").stdout, -1); len(got) != 2 || !strings.HasPrefix(got[1], "web hook ") {
		t.Errorf("orphans -n web:\n%s", strings.Join(got, "\n"))
	}
	expect(t, u.run("orphans"), 0, nil, []string{`No orphans in namespace "default".` + "\n"})
	// status shows the orphan too, with no spec revision.
	st := tableRows(u.must("status", "-n", "media").stdout, statusAge)
	if len(st) != 3 || st[2] != "media resizer east Unknown SpecMissing -/- live" {
		t.Errorf("status -n media:\n%s", strings.Join(st, "\n"))
	}

	var list struct {
		APIVersion, Kind string
		Items            []struct {
			Key, Namespace, Name, Cluster, Message string
			Since                                  time.Time
			Children                               []api.Child
			Stale                                  bool
		}
	}
	if err := json.Unmarshal([]byte(u.must("orphans", "-A", "-o", "json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "tinyctl.io/v1alpha1" || list.Kind != "OrphanList" || len(list.Items) != 2 {
		t.Fatalf("orphans -o json = %+v", list)
	}
	it := list.Items[0]
	if it.Key != "media.resizer" || it.Namespace != "media" || it.Name != "resizer" || it.Cluster != "east" || it.Stale ||
		len(it.Children) != 2 || it.Children[1].Kind != "NetworkPolicy" || it.Since.IsZero() || !strings.HasPrefix(it.Message, "children exist") {
		t.Errorf("orphan item = %+v", it)
	}
	if !list.Items[1].Stale {
		t.Errorf("orphan of a cluster without heartbeat not stale: %+v", list.Items[1])
	}
	yml := u.must("orphans", "-n", "web", "-o", "yaml").stdout
	if !strings.HasPrefix(yml, "apiVersion: tinyctl.io/v1alpha1\nkind: OrphanList\nitems:\n- key: web.hook\n  namespace: web\n  name: hook\n  cluster: west\n") {
		t.Errorf("orphans -o yaml:\n%s", yml)
	}
}

func TestOrphansErrors(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"an argument", []string{"orphans", "resizer"}, 2, "Error: unknown command \"resizer\" for \"tinyctl orphans\"\nRun 'tinyctl orphans --help' for usage.\n"},
		{"unknown output format", []string{"orphans", "-o", "wide"}, 2, `Error: unknown output format "wide": use one of table, yaml, json` + "\n"},
		{"invalid status bucket name", []string{"orphans", "--status-bucket", "no.such"}, 1, "Error: bus: open bucket no.such: nats: invalid bucket name\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := u.run(tt.args...)
			expect(t, r, tt.code, nil, []string{tt.stderr})
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}
