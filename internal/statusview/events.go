package statusview

import (
	"io"
	"strconv"
	"time"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/internal/cli"
)

// WriteEvents writes events as an aligned table: AGE (relative to now)
// NAMESPACE NAME CLUSTER REVISION TYPE REASON OBJECT MESSAGE, Warning in
// yellow on a terminal. Without header it writes the rows alone (each new
// event of a watch). It returns w's error.
func WriteEvents(w io.Writer, style cli.Style, evs []event.Event, now time.Time, header bool) error {
	t := newTable("AGE", "NAMESPACE", "NAME", "CLUSTER", "REVISION", "TYPE", "REASON", "OBJECT", "MESSAGE")
	if !header {
		t.rows = t.rows[:0]
	}
	for _, e := range evs {
		ns, name := e.Key()
		typ := plain(e.Type)
		if e.Type == event.Warning {
			typ.paint = style.Yellow
		}
		rev := "-"
		if e.Revision > 0 {
			rev = strconv.FormatUint(e.Revision, 10)
		}
		t.row(plain(cli.Age(e.Time, now)), plain(ns), plain(name), plain(dash(e.Cluster)), plain(rev), typ,
			plain(dash(e.Reason)), plain(dash(e.Object)), plain(dash(oneLine(e.Message))))
	}
	if len(t.rows) == 0 {
		return nil
	}
	return t.write(w)
}
