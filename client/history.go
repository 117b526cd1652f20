package client

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// maxChangedPaths is how many changed field paths a summary names before
// it counts the rest.
const maxChangedPaths = 3

// Change describes one revision of a component's history.
type Change struct {
	Revision uint64
	// Operation is "put", "delete" or "purge" (Revision.Operation).
	Operation string
	Time      time.Time
	// Image is the revision's image, "" for markers, "<invalid>" for a
	// value that does not decode.
	Image string
	// Summary says what the revision did: "created", "deleted", "purged",
	// "re-created", the field paths that changed since the previous value
	// ("spec.image, spec.scaling.maxReplicas"), "no change", or why the
	// value is invalid.
	Summary string
}

// Changes summarises hist (oldest first, as History returns it). history
// is the number of revisions the bucket keeps per key: when hist is that
// long its first revision may not be the first ever, and is summarised as
// "oldest kept revision" instead of "created".
func Changes(hist []Revision, history int) []Change {
	out := make([]Change, 0, len(hist))
	for i, e := range hist {
		c := Change{Revision: e.Revision, Operation: e.Operation, Time: e.Created}
		switch e.Operation {
		case opDelete:
			c.Summary = "deleted"
		case opPurge:
			c.Summary = "purged"
		default:
			c.Image, c.Summary = putSummary(hist, i, history)
		}
		out = append(out, c)
	}
	return out
}

// putSummary returns the image of the put hist[i] and what it changed.
func putSummary(hist []Revision, i, history int) (image, summary string) {
	if err := hist[i].Err; err != nil {
		return "<invalid>", "invalid: " + firstLine(err.Error())
	}
	image = hist[i].Component.Spec.Image
	switch {
	case i == 0 && len(hist) >= history:
		return image, "oldest kept revision"
	case i == 0:
		return image, "created"
	case hist[i-1].Deleted:
		return image, "re-created"
	}
	paths := changedPaths(hist[i-1].Value, hist[i].Value)
	if len(paths) == 0 {
		return image, "no change"
	}
	if len(paths) > maxChangedPaths {
		return image, fmt.Sprintf("%s (+%d more)", strings.Join(paths[:maxChangedPaths], ", "), len(paths)-maxChangedPaths)
	}
	return image, strings.Join(paths, ", ")
}

// changedPaths lists, sorted, the paths of the fields whose values differ
// between two JSON (or YAML-as-JSON) documents; lists compare whole. A
// value that is not JSON compares as a whole document.
func changedPaths(before, after []byte) []string {
	var a, b any
	if json.Unmarshal(before, &a) != nil || json.Unmarshal(after, &b) != nil {
		return []string{"(whole value)"}
	}
	var out []string
	diffValues("", a, b, &out)
	slices.Sort(out)
	return out
}

func diffValues(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, path)
		}
		return
	}
	for k, av := range am {
		diffValues(join(path, k), av, bm[k], out)
	}
	for k, bv := range bm {
		if _, ok := am[k]; !ok {
			diffValues(join(path, k), nil, bv, out)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
