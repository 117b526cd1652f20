package render

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tinyctl/tinyctl/api"
)

// podDisruptionBudget keeps all but one of the worker's pods through
// voluntary disruptions (a node drain, a cluster upgrade), so that a
// component with more than one worker keeps consuming its jobs while its
// nodes are drained one by one. A component that runs at most one pod gets
// none: a budget would block every drain of its node. nil then.
func podDisruptionBudget(c api.Component, m meta) (*policyv1.PodDisruptionBudget, error) {
	if !manyPods(c.Spec) {
		return nil, nil
	}
	md := c.Metadata
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: m.objectMeta(nil),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: selectorLabels(md.Namespace, md.Name)},
		},
	}
	return pdb, stamp(pdb, pdb, m)
}

// manyPods reports whether s may run more than one pod: more than one
// replica, or a scaling limit above one.
func manyPods(s api.Spec) bool {
	if s.Scaling != nil {
		return s.Scaling.MaxReplicas > 1
	}
	return s.Replicas != nil && *s.Replicas > 1
}
