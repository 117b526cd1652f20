package reconcile

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/api"
)

// Placed reports whether comp selects the cluster named cluster with the
// given labels: no placement selects every cluster; with both a cluster
// list and a selector, both must match.
func Placed(comp api.Component, cluster string, clusterLabels map[string]string) bool {
	p := comp.Spec.Placement
	if p == nil {
		return true
	}
	if len(p.Clusters) > 0 && !slices.Contains(p.Clusters, cluster) {
		return false
	}
	if p.ClusterSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(p.ClusterSelector)
		if err != nil || !sel.Matches(labels.Set(clusterLabels)) {
			return false
		}
	}
	return true
}
