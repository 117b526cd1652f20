// Package cluster is a Kubernetes cluster as tinyctl's fleet sees it: its
// Identity (name and labels, which a component's placement and overrides
// select), the Settings its controller renders with, and the Heartbeat
// that controller publishes, a versioned wire format documented field by
// field in docs/status.md.
package cluster

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/api"
)

// Identity is a cluster as placement sees it.
type Identity struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Places reports whether c's placement selects the cluster: no placement
// selects every cluster; with both a cluster list and a selector, both
// must match (a selector that does not parse matches nothing).
func (id Identity) Places(c api.Component) bool {
	p := c.Spec.Placement
	if p == nil {
		return true
	}
	if len(p.Clusters) > 0 && !slices.Contains(p.Clusters, id.Name) {
		return false
	}
	return p.ClusterSelector == nil || matches(p.ClusterSelector, id.Labels)
}

// SelectedBy reports whether override o applies to the cluster: the
// cluster is one of o.Clusters (when any are listed) and matches
// o.ClusterSelector (when it is set). An override that selects by neither
// applies nowhere (validation refuses it), and so does one whose selector
// does not parse.
func (id Identity) SelectedBy(o api.Override) bool {
	if len(o.Clusters) == 0 && o.ClusterSelector == nil {
		return false
	}
	if len(o.Clusters) > 0 && !slices.Contains(o.Clusters, id.Name) {
		return false
	}
	return o.ClusterSelector == nil || matches(o.ClusterSelector, id.Labels)
}

func matches(sel *metav1.LabelSelector, clusterLabels map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(clusterLabels))
}
