package main

import (
	"strings"
	"testing"
)

// withoutColumn returns an aligned table (as tinyctl prints it) with the
// column headed name cut out of every line, so that tables printed a
// second apart compare equal: AGE says "0s" in one and "1s" in the other.
// The column spans from its header to the next header, or to the end of
// the line for the last one. A table without that header fails the test.
func withoutColumn(t *testing.T, table, name string) string {
	t.Helper()
	lines := strings.Split(table, "\n")
	header := " " + lines[0] + " "
	at := strings.Index(header, " "+name+" ")
	if at < 0 {
		t.Fatalf("table has no %s column:\n%s", name, table)
	}
	start, end := at, -1
	if next := strings.TrimLeft(header[at+1+len(name):], " "); next != "" {
		end = len(header) - len(next) - 1
	}
	for i, l := range lines {
		switch {
		case len(l) <= start:
		case end < 0 || len(l) <= end:
			lines[i] = strings.TrimRight(l[:start], " ")
		default:
			lines[i] = l[:start] + l[end:]
		}
	}
	return strings.Join(lines, "\n")
}

func TestWithoutColumnCutsOneAlignedColumn(t *testing.T) {
	table := "NAME   AGE   IMAGE\n" +
		"a      0s    acme/a:1\n" +
		"bb     12m   acme/b:2\n"
	if got, want := withoutColumn(t, table, "AGE"), "NAME   IMAGE\na      acme/a:1\nbb     acme/b:2\n"; got != want {
		t.Errorf("middle column:\n%q\nwant\n%q", got, want)
	}
	last := "NAME   AGE\na      0s\nbb     12m\n"
	if got, want := withoutColumn(t, last, "AGE"), "NAME\na\nbb\n"; got != want {
		t.Errorf("last column:\n%q\nwant\n%q", got, want)
	}
	// Tables that differ only in their AGE column compare equal without it,
	// and tables that differ elsewhere do not.
	other := strings.Replace(table, "0s    acme/a:1", "1s    acme/a:1", 1)
	if withoutColumn(t, table, "AGE") != withoutColumn(t, other, "AGE") {
		t.Error("tables differing only in AGE differ without it")
	}
	changed := strings.Replace(table, "acme/a:1", "acme/a:2", 1)
	if withoutColumn(t, table, "AGE") == withoutColumn(t, changed, "AGE") {
		t.Error("tables differing in IMAGE compare equal without AGE")
	}
}
