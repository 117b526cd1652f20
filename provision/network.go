package provision

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NetworkRanges are a cluster's pod and Service address ranges, as the
// controller's chart takes them (network.podCIDRs, network.serviceCIDRs):
// `internet` egress excludes them, and allow lists may not name them.
type NetworkRanges struct {
	PodCIDRs, ServiceCIDRs []string
}

// DiscoverNetwork reads the cluster's ranges from the API server: the
// nodes' spec.podCIDRs (each node's share of the cluster's pod range; a
// node added later may get one outside them) and the ServiceCIDR objects
// (networking.k8s.io/v1). A range it cannot read is left empty: an API
// server without ServiceCIDRs, a CNI that does not use the nodes' ranges.
// Overlapping and repeated ranges are folded into the widest.
func (p *Provisioner) DiscoverNetwork(ctx context.Context) (NetworkRanges, error) {
	var out NetworkRanges
	nodes, err := p.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return out, fmt.Errorf("list nodes: %w", err)
	}
	for _, n := range nodes.Items {
		out.PodCIDRs = append(out.PodCIDRs, n.Spec.PodCIDRs...)
		if len(n.Spec.PodCIDRs) == 0 && n.Spec.PodCIDR != "" {
			out.PodCIDRs = append(out.PodCIDRs, n.Spec.PodCIDR)
		}
	}
	cidrs, err := p.kube.NetworkingV1().ServiceCIDRs().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return out, fmt.Errorf("list ServiceCIDRs: %w", err)
	default:
		for _, c := range cidrs.Items {
			out.ServiceCIDRs = append(out.ServiceCIDRs, c.Spec.CIDRs...)
		}
	}
	out.PodCIDRs, out.ServiceCIDRs = fold(out.PodCIDRs), fold(out.ServiceCIDRs)
	return out, nil
}

// Values are r as the controller chart's value network.
func (r NetworkRanges) Values() map[string]any {
	return map[string]any{"podCIDRs": toAnySlice(r.PodCIDRs), "serviceCIDRs": toAnySlice(r.ServiceCIDRs)}
}

// fold returns the canonical form of cidrs, sorted, without a range that
// another one contains; unparsable entries are dropped.
func fold(cidrs []string) []string {
	var ps []netip.Prefix
	for _, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil {
			ps = append(ps, p.Masked())
		}
	}
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		if a.Bits() != b.Bits() {
			return a.Bits() - b.Bits() // wider first
		}
		return a.Addr().Compare(b.Addr())
	})
	var kept []netip.Prefix
	for _, p := range ps {
		if !slices.ContainsFunc(kept, func(k netip.Prefix) bool { return k.Contains(p.Addr()) && k.Bits() <= p.Bits() }) {
			kept = append(kept, p)
		}
	}
	slices.SortFunc(kept, netip.Prefix.Compare)
	out := make([]string, len(kept))
	for i, p := range kept {
		out[i] = p.String()
	}
	return out
}

func toAnySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
