package statusview

import (
	"strings"
	"testing"
)

func TestColourDoesNotShiftColumns(t *testing.T) {
	paint := func(s string) string { return "\x1b[31m" + s + "\x1b[0m" }
	tbl := newTable("READY", "REASON")
	tbl.row(cell{"True", paint}, plain("Reconciled"))
	tbl.row(plain("Unknown"), plain("NotReconciled"))
	var b strings.Builder
	if err := tbl.write(&b); err != nil {
		t.Fatal(err)
	}
	visible := strings.NewReplacer("\x1b[31m", "", "\x1b[0m", "").Replace(b.String())
	want := "READY     REASON\nTrue      Reconciled\nUnknown   NotReconciled\n"
	if visible != want {
		t.Errorf("table as seen on a terminal:\n%s\nwant:\n%s", visible, want)
	}
	if !strings.Contains(b.String(), "\x1b[31mTrue\x1b[0m      Reconciled") {
		t.Errorf("the colour codes should wrap the text only, before the padding:\n%q", b.String())
	}
}
