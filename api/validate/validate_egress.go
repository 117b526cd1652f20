package validate

import (
	"net/netip"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
)

// validateEgress checks the posture word, or the allow list.
func validateEgress(e api.Egress, path *field.Path) field.ErrorList {
	switch e.Mode {
	case api.EgressNone, api.EgressCluster, api.EgressInternet:
		if len(e.Allow) > 0 {
			return field.ErrorList{field.Forbidden(path.Child("allow"), "allow rules need the form egress: {allow: [...]}")}
		}
		return nil
	case api.EgressAllow:
		if len(e.Allow) == 0 {
			return field.ErrorList{field.Required(path.Child("allow"),
				"list at least one rule, or use egress: none (NATS and DNS only)")}
		}
		var errs field.ErrorList
		for i, r := range e.Allow {
			errs = append(errs, validateEgressRule(r, path.Child("allow").Index(i))...)
		}
		return errs
	default:
		return field.ErrorList{field.NotSupported(path, e.Mode,
			[]string{api.EgressNone, api.EgressCluster, api.EgressInternet, "{allow: [...]}"})}
	}
}

// validateEgressRule checks that a rule names exactly one kind of peer (an
// IP block, or pods by namespace and/or labels) and that its ports are
// valid.
func validateEgressRule(r api.EgressRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	hasPods := r.Namespace != "" || len(r.PodLabels) > 0
	switch {
	case r.CIDR != "" && hasPods:
		errs = append(errs, field.Forbidden(path, "set either cidr or namespace/podLabels, not both"))
	case r.CIDR == "" && !hasPods:
		errs = append(errs, field.Required(path, "set cidr, or namespace and/or podLabels"))
	}
	if r.CIDR != "" {
		errs = append(errs, validateIPBlock(r, path)...)
	} else if len(r.Except) > 0 {
		errs = append(errs, field.Forbidden(path.Child("except"), "only valid with cidr"))
	}
	if r.Namespace != "" {
		errs = append(errs, dns1123Label(path.Child("namespace"), r.Namespace)...)
	}
	errs = append(errs, validateLabelMap(r.PodLabels, path.Child("podLabels"))...)
	for i, p := range r.Ports {
		errs = append(errs, validatePort(p, path.Child("ports").Index(i))...)
	}
	return errs
}

// validateIPBlock checks the cidr and that every except lies strictly
// inside it.
func validateIPBlock(r api.EgressRule, path *field.Path) field.ErrorList {
	errs := validation.IsValidCIDR(path.Child("cidr"), r.CIDR)
	block, blockErr := netip.ParsePrefix(r.CIDR)
	for i, ex := range r.Except {
		p := path.Child("except").Index(i)
		exErrs := validation.IsValidCIDR(p, ex)
		errs = append(errs, exErrs...)
		if len(exErrs) > 0 || blockErr != nil {
			continue
		}
		inner, _ := netip.ParsePrefix(ex)
		if inner.Bits() <= block.Bits() || !block.Contains(inner.Addr()) {
			errs = append(errs, field.Invalid(p, ex, "must be a strict subset of cidr "+r.CIDR))
		}
	}
	return errs
}

func validatePort(p api.Port, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidPortNum(int(p.Port)) {
		errs = append(errs, field.Invalid(path.Child("port"), p.Port, msg))
	}
	switch p.Protocol {
	case "", "TCP", "UDP", "SCTP":
	default:
		errs = append(errs, field.NotSupported(path.Child("protocol"), p.Protocol, []string{"TCP", "UDP", "SCTP"}))
	}
	return errs
}
