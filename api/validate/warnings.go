package validate

import (
	"fmt"
	"net/netip"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
)

// Warnings returns advice about a component that is valid but probably not
// what its author wants, each prefixed with its field path like Kubernetes
// API warnings. The CLI prints them on publish; they never block it.
//
// It warns about an image pinned only by the tag "latest" (the tag moves, so
// re-publishing does not roll out a new build and pods may run different
// builds) and about an allow rule for 0.0.0.0/0 or ::/0 (that is egress:
// internet, said less plainly) and about a backoff whose first entry differs
// from ackWait (JetStream then uses the first backoff as the ack wait). It
// warns about overrides the same way about their images, and about an
// override naming a cluster spec.placement leaves out (it never applies).
func Warnings(c api.Component) []string {
	var out []string
	spec := field.NewPath("spec")
	if isLatestTag(c.Spec.Image) {
		out = append(out, fmt.Sprintf("%s: %q is pinned by the moving tag latest: pods may run different builds "+
			"and a new build is not rolled out; pin a version tag or a digest", spec.Child("image"), c.Spec.Image))
	}
	out = append(out, backoffWarnings(c.Spec.Jobs.Consumer, spec.Child("jobs", "consumer"))...)
	out = append(out, egressWarnings(c.Spec.Egress, spec.Child("egress"))...)
	if c.Spec.AutomountServiceAccountToken && c.Spec.ServiceAccountName == "" {
		out = append(out, fmt.Sprintf("%s: mounts the API token of the namespace's default ServiceAccount into every worker pod; "+
			"name the account the worker needs (serviceAccountName), or leave the token out", spec.Child("automountServiceAccountToken")))
	}
	return append(out, overrideWarnings(c.Spec, spec.Child("overrides"))...)
}

// overrideWarnings warns about override images pinned by latest and about
// clusters an override names but the placement does not.
func overrideWarnings(s api.Spec, path *field.Path) []string {
	var out []string
	for i, o := range s.Overrides {
		p := path.Index(i)
		if isLatestTag(o.Image) {
			out = append(out, fmt.Sprintf("%s: %q is pinned by the moving tag latest: pods may run different builds "+
				"and a new build is not rolled out; pin a version tag or a digest", p.Child("image"), o.Image))
		}
		if s.Placement == nil || len(s.Placement.Clusters) == 0 {
			continue
		}
		for j, name := range o.Clusters {
			if !slices.Contains(s.Placement.Clusters, name) {
				out = append(out, fmt.Sprintf("%s: cluster %q is not in spec.placement.clusters: the component does not run there",
					p.Child("clusters").Index(j), name))
			}
		}
	}
	return out
}

// backoffWarnings warns when backoff[0] silently replaces ackWait.
func backoffWarnings(c api.ConsumerSpec, path *field.Path) []string {
	if len(c.Backoff) == 0 {
		return nil
	}
	first, err1 := time.ParseDuration(string(c.Backoff[0]))
	ackWait, err2 := time.ParseDuration(string(c.AckWait))
	if err1 != nil || err2 != nil || first == ackWait {
		return nil
	}
	return []string{fmt.Sprintf("%s: JetStream uses the first backoff (%s) as the ack wait, not ackWait (%s); make them equal",
		path.Child("backoff").Index(0), c.Backoff[0], c.AckWait)}
}

// egressWarnings warns about allow rules that open every address.
func egressWarnings(e api.Egress, path *field.Path) []string {
	if e.Mode != api.EgressAllow {
		return nil
	}
	var out []string
	for i, r := range e.Allow {
		if p, err := netip.ParsePrefix(r.CIDR); err == nil && p.Bits() == 0 {
			out = append(out, fmt.Sprintf("%s: %s allows every address; write egress: internet if that is intended",
				path.Child("allow").Index(i).Child("cidr"), r.CIDR))
		}
	}
	return out
}
