package statusview

import (
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

// ClusterList is the machine-readable output of `tinyctl clusters`, a
// documented contract (docs/cli.md) like StatusList.
type ClusterList struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Items      []client.ClusterRow `json:"items"`
}

// ClusterListKind is the kind of a ClusterList.
const ClusterListKind = "ClusterList"

// NewClusterList wraps rows.
func NewClusterList(rows []client.ClusterRow) ClusterList {
	if rows == nil {
		rows = []client.ClusterRow{}
	}
	return ClusterList{APIVersion: api.APIVersion, Kind: ClusterListKind, Items: rows}
}

// WriteClusterTable writes NAME LABELS HEARTBEAT PLACED READY DEGRADED
// BEHIND HUB:
// HEARTBEAT is the age of the last heartbeat, "stale <age>" once it
// expired ("stale" when none is held); HUB is how the fleet hub gathers
// the cluster's records ("-" when it does not).
func WriteClusterTable(w io.Writer, style cli.Style, rows []client.ClusterRow, now time.Time) error {
	t := newTable("NAME", "LABELS", "HEARTBEAT", "PLACED", "READY", "DEGRADED", "BEHIND", "HUB")
	for _, r := range rows {
		behind := plain(strconv.Itoa(r.Behind))
		if r.Behind > 0 {
			behind.paint = style.Yellow
		}
		degraded := plain(strconv.Itoa(r.Degraded))
		if r.Degraded > 0 {
			degraded.paint = style.Red
		}
		t.row(plain(r.Name), plain(labelCell(r.Labels)), lastHeartbeat(style, r, now),
			plain(strconv.Itoa(r.Placed)), plain(strconv.Itoa(r.Ready)), degraded, behind, plain(hub(r)))
	}
	return t.write(w)
}

func lastHeartbeat(style cli.Style, r client.ClusterRow, now time.Time) cell {
	text := "-"
	if !r.LastHeartbeat.IsZero() {
		text = cli.Age(r.LastHeartbeat, now)
	}
	if r.Stale {
		return cell{strings.TrimSuffix(heartbeatStale+" "+text, " -"), style.Red}
	}
	return plain(text)
}

func labelCell(l map[string]string) string {
	if len(l) == 0 {
		return "-"
	}
	return labels.Set(l).String()
}

// hub describes the fleet source of a cluster: its domain, how far behind
// the hub's copy is and how long ago the hub last heard from it.
func hub(r client.ClusterRow) string {
	m := r.Member
	if m == nil {
		return "-"
	}
	s := "domain " + m.Domain + ", lag " + strconv.FormatUint(m.Lag, 10)
	if m.Active >= 0 {
		s += ", heard " + m.Active.Truncate(time.Second).String() + " ago"
	}
	if m.Error != "" {
		s += ", error: " + m.Error
	}
	return s
}
