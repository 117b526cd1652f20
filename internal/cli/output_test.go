package cli_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

func TestTableAlignsColumns(t *testing.T) {
	var b bytes.Buffer
	tbl := cli.NewTable(&b, "NAME", "IMAGE", "AGE")
	tbl.Row("a", "acme/a:1", "5s")
	tbl.Row("longer-name", "", "2d")
	if err := tbl.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "NAME          IMAGE      AGE\n" +
		"a             acme/a:1   5s\n" +
		"longer-name   <none>     2d\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestAge(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[time.Duration]string{
		45 * time.Second: "45s", 12 * time.Minute: "12m", 3*time.Hour + 4*time.Minute: "3h4m", 5 * 24 * time.Hour: "5d",
	} {
		if got := cli.Age(now.Add(-in), now); got != want {
			t.Errorf("Age(%s ago) = %q, want %q", in, got, want)
		}
	}
	if got := cli.Age(time.Time{}, now); got != "<unknown>" {
		t.Errorf("Age(zero) = %q", got)
	}
}

func TestJSONToYAMLKeepsOrderAndQuotesOnlyWhenNeeded(t *testing.T) {
	got, err := cli.JSONToYAML([]byte(`{"spec":{"image":"a:1","env":[{"name":"PORT","value":"8080"}],"subjects":["jobs.>"],"on":"yes","off":"no","empty":"","colon":"a: b","n":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "spec:\n  image: a:1\n  env:\n  - name: PORT\n    value: \"8080\"\n  subjects:\n  - jobs.>\n  \"on\": \"yes\"\n  \"off\": \"no\"\n  empty: \"\"\n  colon: \"a: b\"\n  \"n\": 3\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("yaml (-want +got):\n%s", diff)
	}
}

func TestParseFormat(t *testing.T) {
	if f, err := cli.ParseFormat("json", cli.FormatTable, cli.FormatJSON); err != nil || f != cli.FormatJSON {
		t.Errorf("ParseFormat(json) = %q, %v", f, err)
	}
	_, err := cli.ParseFormat("xml", cli.FormatTable, cli.FormatJSON)
	if err == nil || err.Error() != `unknown output format "xml": use one of table, json` {
		t.Errorf("err = %v", err)
	}
	f, err := cli.ParseFormat("jsonpath={.items[*].key}", cli.FormatTable, cli.FormatJSONPath)
	if tmpl, ok := f.Template(); err != nil || !ok || tmpl != "{.items[*].key}" || f.Kind() != cli.FormatJSONPath {
		t.Errorf("ParseFormat(jsonpath=...) = %q (%q, %v), %v", f, tmpl, ok, err)
	}
	if _, err := cli.ParseFormat("jsonpath={.x}", cli.FormatTable, cli.FormatJSON); err == nil ||
		err.Error() != `unknown output format "jsonpath={.x}": use one of table, json` {
		t.Errorf("jsonpath where it is not offered: %v", err)
	}
	if _, err := cli.ParseFormat("yaml", cli.FormatJSONPath); err == nil || err.Error() != `unknown output format "yaml": use one of jsonpath=TEMPLATE` {
		t.Errorf("the offer of jsonpath reads: %v", err)
	}
}

// TestJSONPathPrintsWholeNumbersWhole: a revision past a million reads as
// written, not 1e+06, and filters still compare numbers.
func TestJSONPathPrintsWholeNumbersWhole(t *testing.T) {
	var b bytes.Buffer
	f, err := cli.ParseFormat(`jsonpath={.items[?(@.revision>5)].revision} {.missing}`, cli.FormatJSONPath)
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{"items": []map[string]any{{"revision": 3}, {"revision": 1234567}}}
	if err := cli.WriteData(&b, f, v); err != nil || b.String() != "1234567 \n" {
		t.Errorf("printed %q (%v), want \"1234567 \\n\"", b.String(), err)
	}
}

func TestStyleIsPlainOffATerminal(t *testing.T) {
	var b bytes.Buffer
	if got := cli.StyleFor(&b, func(string) string { return "" }).Green("created"); got != "created" {
		t.Errorf("Green off a terminal = %q, want plain text", got)
	}
}

func TestNewItemDescribesRevisions(t *testing.T) {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	valid := `{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"a"},"spec":{"image":"a:1","jobs":{"subjects":["j.a"]}}}`
	stored := func(rev uint64, value string) client.Revision {
		c, err := decode.Component([]byte(value))
		return client.Revision{Key: "default.a", Revision: rev, Operation: "put", Created: at, Value: []byte(value), Component: c, Err: err}
	}
	tests := []struct {
		name  string
		entry client.Revision
		want  string
	}{
		{"a put", stored(3, valid),
			`{"key":"default.a","revision":3,"operation":"put","time":"2025-06-01T11:00:00Z","component":` + valid + `}`},
		{"a delete marker", client.Revision{Key: "default.a", Revision: 4, Deleted: true, Operation: "delete", Created: at},
			`{"key":"default.a","revision":4,"operation":"delete","time":"2025-06-01T11:00:00Z"}`},
		{"a value that does not decode", stored(5, `{"spec":1}`),
			`{"key":"default.a","revision":5,"operation":"put","time":"2025-06-01T11:00:00Z","error":"decode component: spec: must be an object, not a number"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := cli.MarshalJSON(cli.NewItem(tt.entry))
			if err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, compact.String()); diff != "" {
				t.Errorf("item (-want +got):\n%s", diff)
			}
		})
	}
}
