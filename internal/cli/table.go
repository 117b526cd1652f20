package cli

import (
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// Table writes rows with aligned columns, kubectl style: upper-case
// headers, three spaces between columns, "<none>" for empty cells.
type Table struct {
	tw *tabwriter.Writer
}

// NewTable starts a table on w with the given column headers.
func NewTable(w io.Writer, headers ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)}
	t.Row(headers...)
	return t
}

// Row adds one row; cells are tab-free text.
func (t *Table) Row(cells ...string) {
	out := make([]string, len(cells))
	for i, c := range cells {
		if c == "" {
			c = "<none>"
		}
		out[i] = strings.ReplaceAll(c, "\t", " ")
	}
	_, _ = io.WriteString(t.tw, strings.Join(out, "\t")+"\n")
}

// Flush writes the table out. It returns the writer's error.
func (t *Table) Flush() error { return t.tw.Flush() }

// Age renders how long ago t was, as kubectl's AGE column does ("45s",
// "12m", "3h4m", "5d"). A zero t gives "<unknown>".
func Age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}
