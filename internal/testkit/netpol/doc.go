// Package netpol evaluates Kubernetes NetworkPolicies without a cluster:
// given the policies, the namespaces' labels and the two ends of a
// connection, it answers whether the policies allow it. Tests use it to
// prove what a rendered NetworkPolicy allows and denies, rather than
// comparing its YAML with what the author believes it means.
//
// The semantics are those of the networking.k8s.io/v1 API:
//
//   - A policy applies to the pods of its own namespace that its
//     spec.podSelector matches (an empty selector matches them all), in the
//     directions its policyTypes name. policyTypes left empty means Ingress,
//     plus Egress when the policy has egress rules, as the API server
//     defaults it.
//   - A pod that no policy applies to in a direction is allowed everything
//     in that direction. A pod that some policy applies to is allowed a
//     connection iff some rule of some such policy allows it: policies and
//     rules only add, there is no deny rule and no order.
//   - A rule allows a connection when one of its peers (to or from)
//     matches the other end and one of its ports matches the destination
//     port. No peers means every peer; no ports means every port.
//   - A peer with podSelector alone matches the pods of the policy's
//     namespace that it selects; with namespaceSelector alone, every pod of
//     the namespaces it selects; with both, the pods the podSelector
//     selects in the namespaces the namespaceSelector selects (AND, not OR).
//     An empty selector matches everything.
//   - Namespaces are selected by their labels. Every namespace carries
//     kubernetes.io/metadata.name=<its name>, as the API server guarantees,
//     whether or not the caller listed it.
//   - A peer with ipBlock matches an address inside cidr and outside every
//     except. The API leaves open whether an ipBlock applies to the
//     addresses of pods; most CNI plugins (Calico, Cilium, and the iptables
//     based ones) match them, and so does this package: a pod peer with a
//     known IP matches an ipBlock that contains it. A bare address (one
//     outside any pod) matches only ipBlocks. IPv4 addresses never match
//     IPv6 blocks and the other way round.
//   - A port matches on its protocol (TCP when unset) and on its port
//     number, or any port when unset, or the range port..endPort
//     inclusive. Named ports are not supported: New reports them with
//     errors.ErrUnsupported.
//
// A connection between two pods needs both the source's egress and the
// destination's ingress; Egress and Ingress answer one side each.
//
// What is out of scope is what the API leaves to the implementation:
// traffic of hostNetwork pods, traffic to a node from its own pods, and
// Service virtual IPs, which are translated to pod addresses before
// policies apply on most plugins (ask about the backing pod instead).
package netpol
