package provision

import (
	"fmt"
	"strings"
)

// Action says what a step did to one object or release.
type Action string

// Actions reported in a Result.
const (
	// Created: the object or release did not exist and was created.
	Created Action = "created"
	// Configured: the object existed and was changed.
	Configured Action = "configured"
	// Upgraded: the release got a new revision.
	Upgraded Action = "upgraded"
	// Unchanged: nothing was written.
	Unchanged Action = "unchanged"
	// Skipped: the object belongs to someone else and was left alone.
	Skipped Action = "skipped"
	// Removed: the object or release was deleted.
	Removed Action = "removed"
	// Kept: uninstall left the object in place on purpose (see Detail).
	Kept Action = "kept"
	// Absent: there was nothing to remove.
	Absent Action = "absent"
)

// Result describes one object or release and what a step did to it.
type Result struct {
	// Kind is a Kubernetes kind, or "Release" for a Helm release.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Action    Action `json:"action"`
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
func (r Result) Wrote() bool {
	switch r.Action {
	case Created, Configured, Upgraded, Removed:
		return true
	}
	return false
}

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
