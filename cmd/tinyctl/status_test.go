package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// statuses opens the status and heartbeat buckets as a controller would.
func (u *user) statuses() *status.Store {
	u.t.Helper()
	conn, err := bus.NewConn(u.nats.Connect(u.t), nil)
	if err != nil {
		u.t.Fatal(err)
	}
	s, err := status.Open(context.Background(), conn, status.Config{}, kv.Ensure)
	if err != nil {
		u.t.Fatal(err)
	}
	return s
}

// bucketExists reports whether the KV bucket exists.
func (u *user) bucketExists(bucket string) bool {
	u.t.Helper()
	js, err := jetstream.New(u.nats.Connect(u.t))
	if err != nil {
		u.t.Fatal(err)
	}
	_, err = js.KeyValue(context.Background(), bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return false
	}
	if err != nil {
		u.t.Fatal(err)
	}
	return true
}

// report writes a status record as cluster's controller would.
func report(t *testing.T, s *status.Store, st api.Status) {
	t.Helper()
	if _, err := s.Put(context.Background(), st); err != nil {
		t.Fatal(err)
	}
}

// beat writes the heartbeat of cluster name with ttl.
func beat(t *testing.T, s *status.Store, name string, ttl time.Duration) {
	t.Helper()
	if _, err := s.Beat(context.Background(), cluster.Heartbeat{Cluster: name, Controller: "tinyctl-" + name}, ttl); err != nil {
		t.Fatal(err)
	}
}

// ready is a status as a controller writes it after a successful or a
// failed reconcile.
func ready(key, cluster string, observed uint64, status, reason string) api.Status {
	stalled := api.Condition{Type: "Stalled", Status: "False", Reason: reason}
	if status == "Stalled" {
		status, stalled.Status = "False", "True"
	}
	return api.Status{Component: key, Cluster: cluster, ObservedRevision: observed, Conditions: []api.Condition{
		{Type: "Ready", Status: api.ConditionStatus(status), Reason: reason, Message: reason + " happened"}, stalled,
	}}
}

// tableRows returns a table's lines as their whitespace-separated cells,
// header first, without the AGE column at index age (-1: keep all).
func tableRows(table string, age int) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		f := strings.Fields(line)
		if age >= 0 && age < len(f) {
			f = append(f[:age:age], f[age+1:]...)
		}
		out = append(out, strings.Join(f, " "))
	}
	return out
}

// statusAge is the index of the AGE column of the status table.
const statusAge = 6

func TestStatusShowsEveryClusterAndMarksStaleOnes(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	f := u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0")+"---\n"+component("media", "cropper", "acme/cropper:1.0.0"))
	u.must("apply", "-f", f) // resizer 1, cropper 2
	u.file("c.yaml", component("media", "resizer", "acme/resizer:1.1.0"))
	u.must("apply", "-f", f) // resizer 3
	u.must("apply", "-f", u.file("w.yaml", component("web", "hook", "acme/hook:1.0.0")))

	s := u.statuses()
	report(t, s, ready("media.resizer", "east", 3, "True", "Reconciled"))
	report(t, s, ready("media.resizer", "north", 3, "Stalled", "Invalid"))
	report(t, s, ready("media.resizer", "west", 1, "False", "Retrying"))
	beat(t, s, "east", time.Minute)
	beat(t, s, "west", time.Second) // expires a second from now
	// north never beats: stale at once.

	testenv.Eventually(t, 10*time.Second, func() error {
		got := tableRows(u.must("status", "-n", "media").stdout, statusAge)
		want := []string{
			"NAMESPACE NAME CLUSTER READY REASON REVISION HEARTBEAT",
			"media cropper - Unknown NotReconciled -/2 -",
			"media resizer east True Reconciled 3/3 live",
			"media resizer north Stalled Invalid 3/3 stale",
			"media resizer west False Retrying 1/3 stale",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			return fmt.Errorf("status -n media:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		return nil
	})

	one := u.must("status", "resizer", "-n", "media").stdout
	if rows := tableRows(one, statusAge); len(rows) != 4 || !strings.HasPrefix(rows[1], "media resizer east ") {
		t.Errorf("status resizer shows other rows:\n%s", one)
	}
	if lines := strings.Split(one, "\n"); strings.Index(lines[0], "REASON") != strings.Index(lines[1], "Reconciled") {
		t.Errorf("columns are not aligned:\n%s", one)
	}
	all := tableRows(u.must("status", "-A").stdout, statusAge)
	if len(all) != 6 || all[5] != "web hook - Unknown NotReconciled -/4 -" {
		t.Errorf("status -A:\n%s", strings.Join(all, "\n"))
	}
}

// statusList is the documented shape of `tinyctl status -o json`.
type statusList struct {
	APIVersion, Kind string
	Items            []struct {
		Key, Namespace, Name, Cluster      string
		LatestRevision, ObservedRevision   uint64
		UpToDate, Stalled, Stale, Degraded bool
		Ready, Applied, Reason, Message    string
		Heartbeat                          *struct {
			Controller string
			TTLSeconds int64
			Time       time.Time
		}
		Status *api.Status
	}
}

func TestStatusMachineOutput(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	u.must("apply", "-f", u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0")+"---\n"+component("media", "cropper", "acme/cropper:1.0.0")))
	s := u.statuses()
	st := ready("media.resizer", "east", 1, "True", "Reconciled")
	st.Children = []api.Child{{Kind: "Deployment", Namespace: "media", Name: "resizer", Hash: "abc"}}
	report(t, s, st)
	beat(t, s, "east", time.Minute)

	var list statusList
	if err := json.Unmarshal([]byte(u.must("status", "-n", "media", "-o", "json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "tinyctl.io/v1alpha1" || list.Kind != "StatusList" || len(list.Items) != 2 {
		t.Fatalf("status -o json = %+v", list)
	}
	cropper, resizer := list.Items[0], list.Items[1]
	if cropper.Key != "media.cropper" || cropper.Cluster != "" || cropper.Ready != "Unknown" || cropper.Reason != "NotReconciled" ||
		cropper.LatestRevision != 2 || cropper.ObservedRevision != 0 || cropper.UpToDate || cropper.Status != nil || cropper.Heartbeat != nil {
		t.Errorf("component no cluster reported on = %+v", cropper)
	}
	if resizer.Key != "media.resizer" || resizer.Namespace != "media" || resizer.Name != "resizer" || resizer.Cluster != "east" ||
		resizer.Ready != "True" || resizer.Stalled || resizer.Stale || !resizer.UpToDate || resizer.Reason != "Reconciled" ||
		resizer.Message != "Reconciled happened" || resizer.LatestRevision != 1 || resizer.ObservedRevision != 1 {
		t.Errorf("ready component = %+v", resizer)
	}
	if hb := resizer.Heartbeat; hb == nil || hb.Controller != "tinyctl-east" || hb.TTLSeconds != 60 || hb.Time.IsZero() {
		t.Errorf("heartbeat = %+v", hb)
	}
	if rec := resizer.Status; rec == nil || rec.Cluster != "east" || len(rec.Children) != 1 || rec.Children[0].Hash != "abc" || rec.UpdatedAt.IsZero() {
		t.Errorf("status record = %+v", rec)
	}

	yml := u.must("status", "cropper", "-n", "media", "-o", "yaml").stdout
	want := "apiVersion: tinyctl.io/v1alpha1\nkind: StatusList\nitems:\n- key: media.cropper\n  namespace: media\n  name: cropper\n  latestRevision: 2\n  observedRevision: 0\n  upToDate: false\n  ready: Unknown\n  applied: Unknown\n  degraded: false\n  stalled: false\n  reason: NotReconciled\n"
	if !strings.HasPrefix(yml, want) {
		t.Errorf("status -o yaml:\n%s\nwant it to start with:\n%s", yml, want)
	}
}

func TestStatusErrors(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	expect(t, u.run("status"), 0, nil, []string{`No components found in namespace "default".` + "\n"})
	var empty statusList
	if err := json.Unmarshal([]byte(u.must("status", "-A", "-o", "json").stdout), &empty); err != nil || empty.Items == nil || len(empty.Items) != 0 {
		t.Errorf("status -A -o json with nothing published: %+v, %v (want items: [])", empty, err)
	}
	for _, bucket := range []string{"tinyctl-components", "tinyctl-status", "tinyctl-heartbeats"} {
		if u.bucketExists(bucket) {
			t.Errorf("reading created bucket %s", bucket)
		}
	}
	u.must("apply", "-f", u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0")))
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown component", []string{"status", "nope", "-n", "media"}, 1, `Error: component "nope" not found in namespace "media"` + "\n"},
		{"unknown component, watching", []string{"status", "nope", "-n", "media", "--watch"}, 1, `Error: component "nope" not found in namespace "media"` + "\n"},
		{"component of another namespace", []string{"status", "resizer"}, 1, `Error: component "resizer" not found in namespace "default"` + "\n"},
		{"invalid name", []string{"status", "No_Such"}, 2, `Error: component "No_Such" in namespace "default": not a valid name: `},
		{"NAME with -A", []string{"status", "resizer", "-A"}, 2, "Error: --all-namespaces cannot be used with a NAME\nRun 'tinyctl status --help' for usage.\n"},
		{"two names", []string{"status", "a", "b"}, 2, "Error: accepts at most 1 arg(s), received 2\n"},
		{"unknown output format", []string{"status", "-o", "xml"}, 2, `Error: unknown output format "xml": use one of table, wide, yaml, json, jsonpath=TEMPLATE` + "\n"},
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

// TestStatusSelectsByLabel: -l shows the rows of the components whose
// labels match, on every cluster, and none of an orphan's.
func TestStatusSelectsByLabel(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	teamed := strings.Replace(component("media", "resizer", "acme/resizer:1.0.0"), "  namespace: media\n", "  namespace: media\n  labels: {team: media}\n", 1)
	u.must("apply", "-f", u.file("c.yaml", teamed+"---\n"+component("media", "cropper", "acme/cropper:1.0.0")))
	s := u.statuses()
	report(t, s, ready("media.resizer", "east", 1, "True", "Reconciled"))
	report(t, s, ready("media.cropper", "east", 2, "True", "Reconciled"))
	report(t, s, ready("media.gone", "east", 1, "True", "Reconciled")) // an orphan: no spec, no labels
	beat(t, s, "east", time.Minute)

	got := tableRows(u.must("status", "-A", "-l", "team=media").stdout, statusAge)
	want := []string{"NAMESPACE NAME CLUSTER READY REASON REVISION HEARTBEAT", "media resizer east True Reconciled 1/1 live"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("status -A -l team=media:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := tableRows(u.must("status", "-n", "media", "-l", "!team").stdout, statusAge); len(got) != 2 || !strings.HasPrefix(got[1], "media cropper east") {
		t.Errorf("status -l '!team' shows %q, want only the cropper (the orphan has no labels to match)", got)
	}
	expect(t, u.run("status", "-A", "-l", "team=ops"), 0, nil, []string{`with labels team=ops`})
	expect(t, u.run("status", "resizer", "-n", "media", "-l", "team=media"), 2, nil, []string{"Error: --selector cannot be used with a NAME\n"})
}
