package statusview

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
)

// WriteOrphanTable writes orphan rows as an aligned table: NAMESPACE NAME
// CLUSTER CHILDREN AGE HEARTBEAT, where CHILDREN lists kind/name and AGE is
// the time since the cluster first reported the orphan. It returns w's
// error.
func WriteOrphanTable(w io.Writer, style cli.Style, rows []client.Row, now time.Time) error {
	t := newTable("NAMESPACE", "NAME", "CLUSTER", "CHILDREN", "AGE", "HEARTBEAT")
	for _, r := range rows {
		kids := make([]string, 0, len(r.Children()))
		for _, c := range r.Children() {
			kids = append(kids, c.Kind+"/"+c.Name)
		}
		t.row(plain(r.Namespace()), plain(r.Name()), plain(r.Cluster()), plain(dash(strings.Join(kids, ","))),
			plain(cli.Age(r.OrphanedSince(), now)), heartbeatCell(style, r, now))
	}
	return t.write(w)
}

// Hint says what to do about one orphan: publish the spec again, or delete
// the children by hand (the commands to do so).
func Hint(r client.Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s in cluster %s: publish its spec again (tinyctl apply -f FILE) and the controller adopts these children", r.Key, r.Cluster())
	var refs, streams []string
	for _, c := range r.Children() {
		switch {
		case c.Kind == "Stream":
			streams = append(streams, c.Name)
		case c.Namespace != "":
			refs = append(refs, strings.ToLower(c.Kind)+"/"+c.Name)
		}
	}
	if len(refs) > 0 {
		fmt.Fprintf(&b, ", or delete them by hand: kubectl delete -n %s %s", r.Namespace(), strings.Join(refs, " "))
	}
	for _, s := range streams {
		fmt.Fprintf(&b, "; nats stream rm %s (deletes its queued jobs)", s)
	}
	return b.String()
}

// OrphanList is the machine-readable output of `tinyctl orphans`, a
// documented contract (docs/cli.md).
type OrphanList struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Items      []OrphanItem `json:"items"`
}

// OrphanItem is one component orphaned in one cluster.
type OrphanItem struct {
	Key       string `json:"key"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Cluster   string `json:"cluster"`
	// Since is when the cluster first reported the orphan, UTC.
	Since    time.Time   `json:"since"`
	Children []api.Child `json:"children"`
	Message  string      `json:"message,omitempty"`
	// Stale says the cluster's heartbeat is missing or expired, so the
	// children may have changed since.
	Stale     bool           `json:"stale"`
	Heartbeat *HeartbeatInfo `json:"heartbeat,omitempty"`
}

// NewOrphanList describes orphan rows (items is [], never null, in JSON).
func NewOrphanList(rows []client.Row) OrphanList {
	items := make([]OrphanItem, 0, len(rows))
	for _, r := range rows {
		kids := r.Children()
		if kids == nil {
			kids = []api.Child{}
		}
		items = append(items, OrphanItem{
			Key: r.Key, Namespace: r.Namespace(), Name: r.Name(), Cluster: r.Cluster(),
			Since: r.OrphanedSince().UTC(), Children: kids, Message: r.OrphanMessage(),
			Stale: r.Stale(), Heartbeat: heartbeatInfo(r.Status.Heartbeat),
		})
	}
	return OrphanList{APIVersion: api.APIVersion, Kind: OrphanListKind, Items: items}
}
