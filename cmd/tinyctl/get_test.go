package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// documentedJSON is the stored form of the minimal component, exactly as
// docs/component.md shows it (unwrapped).
const documentedJSON = `{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"extractor","namespace":"workers"},` +
	`"spec":{"image":"registry.example.com/acme/extractor:1.4.2","jobs":{"subjects":["workers.extract.>"],` +
	`"stream":{"storage":"file","maxAge":"24h","duplicateWindow":"2m"},` +
	`"consumer":{"ackWait":"30s","maxDeliver":5,"maxAckPending":1000}},"replicas":1,"egress":"none",` +
	`"deletion":{"stream":"Retain"}}}`

func TestRawKVPutShowsLikeAnApply(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	ctx := context.Background()

	// One bucket gets the component from tinyctl apply...
	doc := strings.Replace(component("workers", "extractor", "registry.example.com/acme/extractor:1.4.2"), "workers.extractor.>", "workers.extract.>", 1)
	f := u.file("extractor.yaml", doc)
	u.must("apply", "-f", f, "--bucket", "applied")
	stored, err := u.specs("applied").Get(ctx, "workers.extractor")
	if err != nil {
		t.Fatal(err)
	}
	if string(stored.Value) != documentedJSON {
		t.Errorf("apply stored\n%s\nwant the documented JSON\n%s", stored.Value, documentedJSON)
	}

	// ...the other from a script with plain nats.go.
	js, err := jetstream.New(u.nats.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "raw", History: 16})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "workers.extractor", []byte(documentedJSON)); err != nil {
		t.Fatal(err)
	}

	// Tables are compared without their AGE column: the two puts are
	// seconds apart, and a second boundary may fall between the runs.
	for _, args := range [][]string{
		{"get", "extractor", "-n", "workers"},
		{"get", "extractor", "-n", "workers", "-o", "json"},
		{"list", "-n", "workers"},
		{"history", "extractor", "-n", "workers"},
	} {
		applied := u.must(append(args, "--bucket", "applied")...).stdout
		raw := u.must(append(args, "--bucket", "raw")...).stdout
		if args[0] != "get" {
			applied, raw = withoutColumn(t, applied, "AGE"), withoutColumn(t, raw, "AGE")
		}
		if applied != raw {
			t.Errorf("tinyctl %s differs:\napplied:\n%s\nraw put:\n%s", strings.Join(args, " "), applied, raw)
		}
	}
}

func TestGetShowsOneComponent(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	// Values a YAML 1.1 reader would take for booleans or numbers must
	// come back quoted.
	env := "  env: [{name: VERBOSE, value: \"yes\"}, {name: PORT, value: \"8080\"}, {name: \"N\", value: \"n\"}]\n  jobs:"
	f := u.file("c.yaml", strings.Replace(component("media", "resizer", "acme/resizer:1.0.0"), "  jobs:", env, 1))
	u.must("apply", "-f", f)

	yml := u.must("get", "resizer", "-n", "media").stdout
	for _, want := range []string{"apiVersion: tinyctl.io/v1alpha1\nkind: Component\nmetadata:\n  name: resizer\n  namespace: media\nspec:\n  image: acme/resizer:1.0.0\n", "    subjects:\n    - media.resizer.>\n", "  - name: VERBOSE\n    value: \"yes\"\n"} {
		if !strings.Contains(yml, want) {
			t.Errorf("get -o yaml lacks %q:\n%s", want, yml)
		}
	}
	// What get prints can be applied again, and changes nothing.
	again := u.file("again.yaml", yml)
	expect(t, u.run("apply", "-f", again), 0, []string{"component/media.resizer unchanged (revision 1)"}, nil)

	tbl := u.must("get", "resizer", "-n", "media", "-o", "table").stdout
	lines := strings.Split(strings.TrimSpace(tbl), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAMESPACE NAME IMAGE SCALING REVISION AGE" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "media resizer acme/resizer:1.0.0 fixed 1 1 ") {
		t.Errorf("get -o table:\n%s", tbl)
	}
}

func TestGetAndListErrors(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"missing component", []string{"get", "nope"}, 1, `Error: component "nope" not found in namespace "default"` + "\n"},
		{"invalid name", []string{"get", "No_Such"}, 2, `Error: component "No_Such" in namespace "default": not a valid name: component key "default.No_Such": "No_Such" a lowercase RFC 1123 label`},
		{"unknown output format", []string{"list", "-o", "xml"}, 2, `Error: unknown output format "xml": use one of table, wide, yaml, json, jsonpath=TEMPLATE, name` + "\n"},
		{"NAME with -A", []string{"get", "x", "-A"}, 2, "Error: --all-namespaces cannot be used with a NAME\n"},
		{"NAME with -l", []string{"get", "x", "-l", "team=a"}, 2, "Error: --selector cannot be used with a NAME\n"},
		{"selector that does not parse", []string{"list", "-l", "team in media"}, 2, `Error: --selector "team in media": `},
		{"too many arguments", []string{"get", "a", "b"}, 2, "Error: accepts at most 1 arg(s), received 2\n"},
		{"bad environment value", []string{"list"}, 2, `Error: environment variable TINYCTL_REQUEST_TIMEOUT="soon": invalid argument "soon" for "--request-timeout" flag`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env []string
			if tt.name == "bad environment value" {
				env = []string{"TINYCTL_REQUEST_TIMEOUT=soon"}
			}
			expect(t, u.runIn("", env, tt.args...), tt.code, nil, []string{tt.stderr})
		})
	}
	if keys := u.keys("tinyctl-components"); keys != nil {
		t.Errorf("reading created the bucket and %v", keys)
	}
}

func TestListTableAndMachineOutput(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	expect(t, u.run("list"), 0, nil, []string{`No components found in namespace "default".`})
	scaled := strings.Replace(component("media", "resizer", "acme/resizer:1.0.0"), "  jobs:", "  scaling: {minReplicas: 0, maxReplicas: 20}\n  jobs:", 1)
	u.must("apply", "-f", u.file("c.yaml", scaled+"---\n"+component("web", "hook", "acme/hook:2.0.0")))

	tbl := u.must("list", "-A").stdout
	want := [][]string{
		{"NAMESPACE", "NAME", "IMAGE", "SCALING", "REVISION", "AGE"},
		{"media", "resizer", "acme/resizer:1.0.0", "auto", "0-20", "1"},
		{"web", "hook", "acme/hook:2.0.0", "fixed", "1", "2"},
	}
	lines := strings.Split(strings.TrimSpace(tbl), "\n")
	if len(lines) != len(want) {
		t.Fatalf("list -A:\n%s", tbl)
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); !strings.HasPrefix(strings.Join(got, " "), strings.Join(w, " ")) {
			t.Errorf("row %d = %q, want it to start with %q", i, lines[i], strings.Join(w, " "))
		}
	}
	if i := strings.Index(lines[0], "IMAGE"); lines[1][i:i+5] != "acme/" || lines[2][i:i+5] != "acme/" {
		t.Errorf("columns are not aligned:\n%s", tbl)
	}

	var list struct {
		APIVersion, Kind string
		Items            []struct {
			Key, Operation, Time string
			Revision             uint64
			Component            struct{ Metadata struct{ Name string } }
		}
	}
	if err := json.Unmarshal([]byte(u.must("list", "-n", "web", "-o", "json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "tinyctl.io/v1alpha1" || list.Kind != "ComponentList" || len(list.Items) != 1 {
		t.Fatalf("list -o json = %+v", list)
	}
	it := list.Items[0]
	if it.Key != "web.hook" || it.Revision != 2 || it.Operation != "put" || it.Time == "" || it.Component.Metadata.Name != "hook" {
		t.Errorf("item = %+v", it)
	}
	yml := u.must("list", "-n", "web", "-o", "yaml").stdout
	if !strings.HasPrefix(yml, "apiVersion: tinyctl.io/v1alpha1\nkind: ComponentList\nitems:\n- key: web.hook\n  revision: 2\n  operation: put\n") {
		t.Errorf("list -o yaml:\n%s", yml)
	}
}

// TestListSelectsByLabelAndPrintsNames: -l keeps the components whose
// labels match, -o name prints what other commands are told of them.
func TestListSelectsByLabelAndPrintsNames(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	labelled := func(ns, name, labels string) string {
		return strings.Replace(component(ns, name, "acme/"+name+":1.0.0"), "  namespace: "+ns+"\n", "  namespace: "+ns+"\n  labels: {"+labels+"}\n", 1)
	}
	u.must("apply", "-f", u.file("c.yaml", labelled("media", "resizer", "team: media, tier: batch")+"---\n"+
		labelled("media", "tagger", "team: media, tier: live")+"---\n"+labelled("web", "hook", "team: web")+"---\n"+
		component("web", "plain", "acme/plain:1.0.0")))

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "-A", "-o", "name"}, "component/media.resizer\ncomponent/media.tagger\ncomponent/web.hook\ncomponent/web.plain\n"},
		{[]string{"list", "-A", "-l", "team=media", "-o", "name"}, "component/media.resizer\ncomponent/media.tagger\n"},
		{[]string{"get", "-A", "-l", "tier in (batch,bulk)", "-o", "name"}, "component/media.resizer\n"},
		{[]string{"list", "-n", "web", "-l", "!team", "-o", "name"}, "component/web.plain\n"},
		{[]string{"get", "hook", "-n", "web", "-o", "name"}, "component/web.hook\n"},
	} {
		if got := u.must(tt.args...).stdout; got != tt.want {
			t.Errorf("tinyctl %s printed %q, want %q", strings.Join(tt.args, " "), got, tt.want)
		}
	}
	if rows := strings.Split(strings.TrimSpace(u.must("list", "-A", "-l", "team=web").stdout), "\n"); len(rows) != 2 || !strings.HasPrefix(rows[1], "web") {
		t.Errorf("list -A -l team=web: %q, want a header and the hook's row", rows)
	}
	expect(t, u.run("list", "-A", "-l", "team=ops"), 0, nil, []string{`No components found in any namespace with labels team=ops.`})
}

// TestWideAndJSONPathOutput: -o wide adds columns to the tables, and
// -o jsonpath=TEMPLATE picks fields of the -o json output as kubectl
// does; a template that does not parse is a usage error naming it, before
// anything is read.
func TestWideAndJSONPathOutput(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	u.must("apply", "-f", u.file("c.yaml", strings.Replace(component("media", "resizer", "acme/resizer:1.0.0"),
		"  namespace: media\n", "  namespace: media\n  labels: {team: media, tier: batch}\n", 1)+"---\n"+component("media", "tagger", "acme/tagger:2.0.0")))
	report(t, u.statuses(), ready("media.resizer", "east", 1, "False", "Retrying"))

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "-n", "media", "-o", "jsonpath={.items[*].key}"}, "media.resizer media.tagger\n"},
		{[]string{"get", "resizer", "-n", "media", "-o", "jsonpath={.spec.image} {.metadata.labels.team}"}, "acme/resizer:1.0.0 media\n"},
		{[]string{"history", "tagger", "-n", "media", "-o", `jsonpath={range .items[*]}{.revision}{"\n"}{end}`}, "2\n"},
		{[]string{"status", "resizer", "-n", "media", "-o", "jsonpath={.items[0].cluster}={.items[0].reason}"}, "east=Retrying\n"},
		{[]string{"describe", "tagger", "-n", "media", "-o", "jsonpath={.component.spec.jobs.subjects[0]}"}, "media.tagger.>\n"},
		// A field a row lacks (tagger has no cluster) and an empty list
		// print nothing, as in kubectl.
		{[]string{"status", "-n", "media", "-o", `jsonpath={range .items[*]}{.name}:{.cluster};{end}`}, "resizer:east;tagger:;\n"},
		{[]string{"list", "-n", "web", "-o", "jsonpath={.items[*].key}"}, ""},
	} {
		if got := u.must(tt.args...).stdout; got != tt.want {
			t.Errorf("tinyctl %s printed %q, want %q", strings.Join(tt.args, " "), got, tt.want)
		}
	}
	expect(t, u.must("list", "-n", "media", "-o", "wide"), 0, []string{"SUBJECTS", "LABELS", "media.resizer.>", "team=media,tier=batch", "media.tagger.>    -"}, nil)
	expect(t, u.must("get", "tagger", "-n", "media", "-o", "wide"), 0, []string{"SUBJECTS", "media.tagger.>"}, nil)
	expect(t, u.must("status", "resizer", "-n", "media", "-o", "wide"), 0, []string{"APPLIED", "DEGRADED", "MESSAGE", "Retrying happened"}, nil)

	expect(t, u.run("list", "-o", "jsonpath={.items[*"), 2, nil, []string{`-o jsonpath template "{.items[*": `})
	expect(t, u.run("list", "-o", "jsonpath"), 2, nil, []string{"-o jsonpath needs a template"})
	expect(t, u.run("get", "resizer", "-n", "media", "-o", "jsonpath={.nope}"), 0, nil, nil)
	expect(t, u.run("orphans", "-o", "wide"), 2, nil, []string{`unknown output format "wide"`})
}
