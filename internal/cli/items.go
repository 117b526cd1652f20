package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/defaults"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/client"
)

// Kinds of the list objects that -o json|yaml prints.
const (
	ListKind    = "ComponentList"
	HistoryKind = "ComponentHistory"
)

// List is the machine-readable output of `tinyctl list` and `tinyctl
// history`: a kind (ListKind or HistoryKind) and one item per component or
// revision. Its shape is a documented contract (docs/cli.md).
type List struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      []Item `json:"items"`
}

// Item is one revision of a component key as stored in the spec bucket.
type Item struct {
	// Key is the spec-bucket key, "<namespace>.<name>".
	Key string `json:"key"`
	// Revision is the bucket revision of this value.
	Revision uint64 `json:"revision"`
	// Operation is "put", "delete" or "purge".
	Operation string `json:"operation"`
	// Time is when NATS stored the revision, in UTC.
	Time time.Time `json:"time"`
	// Component is the stored component in canonical JSON: absent for
	// delete and purge markers and for values that do not decode.
	Component json.RawMessage `json:"component,omitempty"`
	// Error says why a stored value does not decode.
	Error string `json:"error,omitempty"`
}

// NewList returns a list of kind holding items (never null in JSON).
func NewList(kind string, items []Item) List {
	if items == nil {
		items = []Item{}
	}
	return List{APIVersion: api.APIVersion, Kind: kind, Items: items}
}

// NewItem describes a stored revision. A put whose value does not decode
// gets Error instead of Component.
func NewItem(e client.Revision) Item {
	it := Item{Key: e.Key, Revision: e.Revision, Operation: e.Operation, Time: e.Created.UTC()}
	if e.Deleted {
		return it
	}
	err := e.Err
	if err == nil {
		it.Component, err = api.Canonical(e.Component)
	}
	if err != nil {
		it.Component, it.Error = nil, err.Error()
	}
	return it
}

// ImageOf returns the image of a stored value, or "<invalid>" when the
// value does not decode.
func ImageOf(value []byte) string {
	c, err := decode.Component(value)
	if err != nil {
		return "<invalid>"
	}
	return c.Spec.Image
}

// ScalingOf summarises how a stored component's workers are counted:
// "auto 0-20" when KEDA scales it, "fixed 3" otherwise, "<invalid>" when
// the value does not decode.
func ScalingOf(value []byte) string {
	c, err := decode.Component(value)
	if err != nil {
		return "<invalid>"
	}
	c = defaults.Apply(c)
	if s := c.Spec.Scaling; s != nil {
		return fmt.Sprintf("auto %d-%d", s.MinReplicas, s.MaxReplicas)
	}
	if c.Spec.Replicas != nil {
		return fmt.Sprintf("fixed %d", *c.Spec.Replicas)
	}
	return ""
}

// SubjectsAndLabelsOf returns a stored component's job subjects and its
// labels (k=v, sorted), comma-separated; "-" for none, "<invalid>" for
// both when the value does not decode.
func SubjectsAndLabelsOf(value []byte) (subjects, labels string) {
	c, err := decode.Component(value)
	if err != nil {
		return "<invalid>", "<invalid>"
	}
	return dashIfEmpty(strings.Join(c.Spec.Jobs.Subjects, ",")), dashIfEmpty(JoinLabels(c.Metadata.Labels))
}

// JoinLabels prints labels as a selector would match them: k=v pairs,
// sorted by key, comma-separated.
func JoinLabels(labels map[string]string) string {
	l := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		l = append(l, k+"="+labels[k])
	}
	return strings.Join(l, ",")
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
