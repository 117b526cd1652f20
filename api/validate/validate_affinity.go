package validate

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks below are the API server's rules for a pod's affinity and
// spread constraints, so that `tinyctl apply` refuses, with every field
// path at once, what the API server would refuse one Deployment at a time.

// validateAffinity checks node affinity, pod affinity and pod
// anti-affinity.
func validateAffinity(a *corev1.Affinity, p *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		np := p.Child("nodeAffinity")
		if ns := na.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
			rp := np.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(ns.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(rp, "at least one term"))
			}
			for i, t := range ns.NodeSelectorTerms {
				errs = append(errs, nodeSelectorTerm(t, rp.Index(i))...)
			}
		}
		for i, w := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			wp := np.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, weight(w.Weight, wp)...)
			errs = append(errs, nodeSelectorTerm(w.Preference, wp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAntiAffinity"))...)
	}
	return errs
}

// nodeSelectorTerm checks one term: it must say something, each label
// requirement by its operator, each field requirement on metadata.name.
func nodeSelectorTerm(t corev1.NodeSelectorTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		errs = append(errs, field.Required(p, "matchExpressions or matchFields"))
	}
	for i, r := range t.MatchExpressions {
		rp := p.Child("matchExpressions").Index(i)
		for _, msg := range validation.IsQualifiedName(r.Key) {
			errs = append(errs, field.Invalid(rp.Child("key"), r.Key, msg))
		}
		errs = append(errs, nodeOperator(r, rp)...)
	}
	for i, r := range t.MatchFields {
		rp := p.Child("matchFields").Index(i)
		if r.Key != "metadata.name" {
			errs = append(errs, field.NotSupported(rp.Child("key"), r.Key, []string{"metadata.name"}))
		}
		if (r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn) || len(r.Values) != 1 {
			errs = append(errs, field.Invalid(rp, fmt.Sprintf("%s %v", r.Operator, r.Values), "a field requirement is In or NotIn with exactly one value"))
		}
	}
	return errs
}

// nodeOperator checks a requirement's values against its operator.
func nodeOperator(r corev1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	vp := p.Child("values")
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			return field.ErrorList{field.Required(vp, "In and NotIn need values")}
		}
		var errs field.ErrorList
		for i, v := range r.Values {
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(vp.Index(i), v, msg))
			}
		}
		return errs
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			return field.ErrorList{field.Forbidden(vp, "Exists and DoesNotExist take no values")}
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return field.ErrorList{field.Invalid(vp, r.Values, "Gt and Lt take exactly one value")}
		}
		if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			return field.ErrorList{field.Invalid(vp.Index(0), r.Values[0], "Gt and Lt compare whole numbers")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("operator"), r.Operator, []string{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})}
	}
	return nil
}

// podAffinityTerms checks the required and preferred terms of pod
// affinity or anti-affinity at p.
func podAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range required {
		errs = append(errs, podAffinityTerm(t, p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i, w := range preferred {
		wp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		errs = append(errs, weight(w.Weight, wp)...)
		errs = append(errs, podAffinityTerm(w.PodAffinityTerm, wp.Child("podAffinityTerm"))...)
	}
	return errs
}

func podAffinityTerm(t corev1.PodAffinityTerm, p *field.Path) field.ErrorList {
	errs := topologyKey(t.TopologyKey, p.Child("topologyKey"))
	errs = append(errs, selector(t.LabelSelector, p.Child("labelSelector"))...)
	errs = append(errs, selector(t.NamespaceSelector, p.Child("namespaceSelector"))...)
	for i, ns := range t.Namespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(p.Child("namespaces").Index(i), ns, msg))
		}
	}
	errs = append(errs, labelKeys(t.MatchLabelKeys, p.Child("matchLabelKeys"))...)
	return append(errs, labelKeys(t.MismatchLabelKeys, p.Child("mismatchLabelKeys"))...)
}

// validateSpread checks topology spread constraints: each spreads by a
// key, with a skew of at least 1, once per key and policy.
func validateSpread(cs []corev1.TopologySpreadConstraint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range cs {
		cp := p.Index(i)
		if c.MaxSkew < 1 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), c.MaxSkew, "must be at least 1"))
		}
		errs = append(errs, topologyKey(c.TopologyKey, cp.Child("topologyKey"))...)
		switch c.WhenUnsatisfiable {
		case corev1.DoNotSchedule, corev1.ScheduleAnyway:
		default:
			errs = append(errs, field.NotSupported(cp.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []string{"DoNotSchedule", "ScheduleAnyway"}))
		}
		if m := c.MinDomains; m != nil && (*m < 1 || c.WhenUnsatisfiable != corev1.DoNotSchedule) {
			errs = append(errs, field.Invalid(cp.Child("minDomains"), *m, "must be at least 1, and only with whenUnsatisfiable DoNotSchedule"))
		}
		for name, pol := range map[string]*corev1.NodeInclusionPolicy{"nodeAffinityPolicy": c.NodeAffinityPolicy, "nodeTaintsPolicy": c.NodeTaintsPolicy} {
			if pol != nil && *pol != corev1.NodeInclusionPolicyHonor && *pol != corev1.NodeInclusionPolicyIgnore {
				errs = append(errs, field.NotSupported(cp.Child(name), *pol, []string{"Honor", "Ignore"}))
			}
		}
		errs = append(errs, selector(c.LabelSelector, cp.Child("labelSelector"))...)
		errs = append(errs, labelKeys(c.MatchLabelKeys, cp.Child("matchLabelKeys"))...)
		if k := c.TopologyKey + "/" + string(c.WhenUnsatisfiable); seen[k] {
			errs = append(errs, field.Duplicate(cp, fmt.Sprintf("{%s, %s}", c.TopologyKey, c.WhenUnsatisfiable)))
		}
		seen[c.TopologyKey+"/"+string(c.WhenUnsatisfiable)] = true
	}
	return errs
}

func topologyKey(k string, p *field.Path) field.ErrorList {
	if k == "" {
		return field.ErrorList{field.Required(p, "a node label, such as topology.kubernetes.io/zone or kubernetes.io/hostname")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(k) {
		errs = append(errs, field.Invalid(p, k, msg))
	}
	return errs
}

func selector(s *metav1.LabelSelector, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, p)
}

func labelKeys(keys []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, k := range keys {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p.Index(i), k, msg))
		}
	}
	return errs
}

func weight(w int32, p *field.Path) field.ErrorList {
	if w < 1 || w > 100 {
		return field.ErrorList{field.Invalid(p.Child("weight"), w, "must be between 1 and 100")}
	}
	return nil
}
