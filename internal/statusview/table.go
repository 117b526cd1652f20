package statusview

import (
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

// Heartbeat column values.
const (
	heartbeatLive  = "live"
	heartbeatStale = "stale"
)

// ReadyStalled is what the READY column shows for a Stalled row.
const ReadyStalled = "Stalled"

// WriteTable writes rows as an aligned table: NAMESPACE NAME CLUSTER READY
// REASON REVISION AGE HEARTBEAT, with ages relative to now (HEARTBEAT:
// live, or stale and the time since the last heartbeat). style colours
// READY, a revision behind the latest, and stale heartbeats (on a terminal
// only). It returns w's error.
func WriteTable(w io.Writer, style cli.Style, rows []client.Row, now time.Time) error {
	t := newTable("NAMESPACE", "NAME", "CLUSTER", "READY", "REASON", "REVISION", "AGE", "HEARTBEAT")
	for _, r := range rows {
		t.row(
			plain(r.Namespace()), plain(r.Name()), plain(dash(r.Cluster())),
			readyCell(style, r), plain(dash(r.Reason())), revisionCell(style, r),
			plain(age(r, now)), heartbeatCell(style, r, now),
		)
	}
	return t.write(w)
}

// WriteWideTable is WriteTable with APPLIED (every child applied,
// whatever the pods do), DEGRADED and MESSAGE after REASON.
func WriteWideTable(w io.Writer, style cli.Style, rows []client.Row, now time.Time) error {
	t := newTable("NAMESPACE", "NAME", "CLUSTER", "READY", "REASON", "APPLIED", "DEGRADED", "REVISION", "AGE", "HEARTBEAT", "MESSAGE")
	for _, r := range rows {
		t.row(
			plain(r.Namespace()), plain(r.Name()), plain(dash(r.Cluster())),
			readyCell(style, r), plain(dash(r.Reason())), plain(string(r.Applied())), plain(strconv.FormatBool(r.Degraded())),
			revisionCell(style, r), plain(age(r, now)), heartbeatCell(style, r, now), plain(dash(oneLine(r.Message()))),
		)
	}
	return t.write(w)
}

// oneLine is s with every run of white space (newlines, tabs) one space
// and control characters left out, for a table cell.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// readyCell shows the Ready status, or Stalled when the cluster gave up
// until a new revision.
func readyCell(style cli.Style, r client.Row) cell {
	switch {
	case r.Stalled():
		return cell{ReadyStalled, style.Red}
	case r.Ready() == api.ConditionTrue:
		return cell{string(api.ConditionTrue), style.Green}
	case r.Ready() == api.ConditionFalse:
		return cell{string(api.ConditionFalse), style.Red}
	}
	return cell{string(r.Ready()), style.Yellow}
}

// revisionCell shows observed/latest, "-" for a missing one; yellow when
// the cluster is behind.
func revisionCell(style cli.Style, r client.Row) cell {
	text := revision(r.ObservedRevision()) + "/" + revision(r.LatestRevision)
	if r.UpToDate() {
		return plain(text)
	}
	return cell{text, style.Yellow}
}

// heartbeatCell is live, or stale with the time since the last heartbeat
// when the server still holds it.
func heartbeatCell(style cli.Style, r client.Row, now time.Time) cell {
	switch {
	case r.Status == nil:
		return plain("-")
	case r.Stale() && r.Status.Heartbeat != nil:
		return cell{heartbeatStale + " " + cli.Age(r.Status.Heartbeat.Received, now), style.Red}
	case r.Stale():
		return cell{heartbeatStale, style.Red}
	}
	return plain(heartbeatLive)
}

func revision(rev uint64) string {
	if rev == 0 {
		return "-"
	}
	return strconv.FormatUint(rev, 10)
}

// age is the time since the status was written, "-" without one.
func age(r client.Row, now time.Time) string {
	if r.Status == nil {
		return "-"
	}
	return cli.Age(r.Status.UpdatedAt, now)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell is a table cell whose text paint colours after alignment, so the
// colour codes never shift the columns.
type cell struct {
	text  string
	paint func(string) string
}

func plain(text string) cell { return cell{text: text} }

// table aligns cells in columns three spaces apart, like cli.Table, and
// colours them after padding.
type table struct {
	rows [][]cell
}

func newTable(headers ...string) *table {
	t := &table{}
	h := make([]cell, len(headers))
	for i, s := range headers {
		h[i] = plain(s)
	}
	t.rows = append(t.rows, h)
	return t
}

func (t *table) row(cells ...cell) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	widths := make([]int, len(t.rows[0]))
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			text := c.text
			if c.paint != nil {
				text = c.paint(text)
			}
			b.WriteString(text)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text)+3))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
