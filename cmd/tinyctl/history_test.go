package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// rows returns a table's lines split into whitespace-separated fields,
// without the AGE column (third for history).
func historyRows(t *testing.T, table string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[1:] {
		f := strings.Fields(line)
		out = append(out, strings.Join(append(f[:2:2], f[3:]...), " "))
	}
	return out
}

func TestHistoryAndRollback(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	f := u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0"))
	u.must("apply", "-f", f)
	u.file("c.yaml", component("media", "resizer", "acme/resizer:1.1.0"))
	u.must("apply", "-f", f)

	r := u.must("rollback", "resizer", "-n", "media")
	expect(t, r, 0, []string{"component/media.resizer rolled back to revision 1 (new revision 3)\n"}, nil)
	expect(t, u.run("get", "resizer", "-n", "media"), 0, []string{"image: acme/resizer:1.0.0\n"}, nil)

	r = u.must("rollback", "resizer", "-n", "media", "--to-revision", "2")
	expect(t, r, 0, []string{"component/media.resizer rolled back to revision 2 (new revision 4)\n"}, nil)
	r = u.must("rollback", "resizer", "-n", "media", "--to-revision", "4")
	expect(t, r, 0, []string{"component/media.resizer unchanged: revision 4 already holds the value of revision 4\n"}, nil)

	hist := u.must("history", "resizer", "-n", "media").stdout
	if !strings.HasPrefix(hist, "REVISION   OP    AGE") {
		t.Errorf("history header:\n%s", hist)
	}
	want := []string{
		"1 put acme/resizer:1.0.0 created",
		"2 put acme/resizer:1.1.0 spec.image",
		"3 put acme/resizer:1.0.0 spec.image",
		"4 put acme/resizer:1.1.0 spec.image",
	}
	if got := historyRows(t, hist); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	var list struct {
		Kind  string
		Items []struct{ Revision uint64 }
	}
	if err := json.Unmarshal([]byte(u.must("history", "resizer", "-n", "media", "-o", "json").stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "ComponentHistory" || len(list.Items) != 4 || list.Items[3].Revision != 4 {
		t.Errorf("history -o json = %+v", list)
	}
}

func TestHistoryAndRollbackErrors(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	u.must("apply", "-f", u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0")))
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"history of a missing component", []string{"history", "nope", "-n", "media"}, 1, `Error: component "nope" not found in namespace "media"` + "\n"},
		{"rollback with nothing earlier", []string{"rollback", "resizer", "-n", "media"}, 1,
			"Error: roll back component media.resizer: no revision to roll back to: no earlier revision holds a different value (kept revisions: 1)\n"},
		{"rollback to a revision not kept", []string{"rollback", "resizer", "-n", "media", "--to-revision", "9"}, 1,
			"Error: roll back component media.resizer: no revision to roll back to: revision 9 is not in the component's history (kept revisions: 1)\n"},
		{"history without NAME", []string{"history"}, 2, "Error: accepts 1 arg(s), received 0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, u.run(tt.args...), tt.code, nil, []string{tt.stderr})
		})
	}
}
