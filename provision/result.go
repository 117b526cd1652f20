package provision

import (
	"fmt"
	"strings"

	"github.com/tinyctl/tinyctl/api/action"
)

// Result describes one object or release and what a step did to it.
type Result struct {
	// Kind is a Kubernetes kind, or "Release" for a Helm release.
	Kind      string        `json:"kind"`
	Namespace string        `json:"namespace,omitempty"`
	Name      string        `json:"name"`
	Action    action.Action `json:"action"`
	// Chart ("nats-0.1.0") and Revision describe a release after the step.
	Chart    string `json:"chart,omitempty"`
	Revision int    `json:"revision,omitempty"`
	// Detail explains a skip, a kept object or a recovered release.
	Detail string `json:"detail,omitempty"`
}

// Ref renders "Kind/namespace/name" ("Kind/name" when cluster-scoped).
func (r Result) Ref() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// Wrote reports whether the step wrote to the cluster.
func (r Result) Wrote() bool { return r.Action.Wrote() }

// String renders "Release/ns/nats upgraded (nats-0.1.0, revision 2): detail".
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Ref(), r.Action)
	if r.Chart != "" {
		fmt.Fprintf(&b, " (%s, revision %d)", r.Chart, r.Revision)
	}
	if r.Detail != "" {
		fmt.Fprintf(&b, ": %s", r.Detail)
	}
	return b.String()
}

// Progress receives each Result as soon as its step finishes; nil ignores
// them.
type Progress func(Result)

func (p Progress) report(rs ...Result) {
	if p == nil {
		return
	}
	for _, r := range rs {
		p(r)
	}
}
