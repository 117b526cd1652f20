package validate

import (
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
)

// MetadataRanges are the addresses no egress reaches unless the operator
// allows it: 169.254.0.0/16 holds the instance metadata endpoint of the
// major clouds (169.254.169.254), whose credentials a worker must not
// borrow; fd00:ec2::254 is AWS's IPv6 metadata endpoint; fe80::/10 is IPv6
// link-local. `internet` egress excepts them, and an allow list may not
// name them.
var MetadataRanges = []string{"169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128"}

// EgressReach says which addresses an allow list's cidr rules may not
// reach in a cluster. The zero value refuses the metadata ranges only.
type EgressReach struct {
	// ClusterCIDRs are the cluster's pod and Service ranges: a component
	// reaches pods by namespace and podLabels, which its NetworkPolicy
	// keeps to what it names, never by address.
	ClusterCIDRs []string `json:"clusterCIDRs,omitempty"`
	// Metadata lets allow lists name MetadataRanges (serve
	// --egress-allow-metadata).
	Metadata bool `json:"metadata,omitempty"`
}

// forbiddenRange is one range an allow list may not reach, and what it is.
type forbiddenRange struct {
	prefix netip.Prefix
	what   string
}

func (r EgressReach) forbidden() []forbiddenRange {
	var out []forbiddenRange
	if !r.Metadata {
		for _, m := range MetadataRanges {
			out = append(out, forbiddenRange{netip.MustParsePrefix(m), "a link-local range, which holds the cloud metadata endpoint"})
		}
	}
	for _, c := range r.ClusterCIDRs {
		if p, err := netip.ParsePrefix(c); err == nil {
			out = append(out, forbiddenRange{p.Masked(), "this cluster's pod or Service range (reach pods by namespace and podLabels)"})
		}
	}
	return out
}

// Egress reports every cidr rule of c's allow list that reaches a range
// r forbids: one inside it, or one around it whose except list does not
// remove it all. Malformed rules are left to Component.
func (r EgressReach) Egress(c api.Component) field.ErrorList {
	if c.Spec.Egress.Mode != api.EgressAllow {
		return nil
	}
	bad := r.forbidden()
	var errs field.ErrorList
	for i, rule := range c.Spec.Egress.Allow {
		block, err := netip.ParsePrefix(rule.CIDR)
		if err != nil {
			continue
		}
		path := field.NewPath("spec", "egress", "allow").Index(i).Child("cidr")
		for _, f := range bad {
			if !block.Overlaps(f.prefix) || excepted(rule.Except, f.prefix) {
				continue
			}
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("%s reaches %s, %s: list it in except, or have the operator allow it", rule.CIDR, f.prefix, f.what)))
		}
	}
	return errs
}

// excepted reports whether one of except covers all of p.
func excepted(except []string, p netip.Prefix) bool {
	for _, e := range except {
		ep, err := netip.ParsePrefix(e)
		if err == nil && ep.Bits() <= p.Bits() && ep.Contains(p.Addr()) {
			return true
		}
	}
	return false
}
