package apply

import (
	"fmt"

	"github.com/tinyctl/tinyctl/api/action"
)

// Result describes one object and what a verb did to it.
type Result struct {
	Kind      string        `json:"kind"`
	Namespace string        `json:"namespace,omitempty"`
	Name      string        `json:"name"`
	Action    action.Action `json:"action"`
	// TakenFrom names the other field managers that owned fields this
	// apply set (an edit it reverted); empty for a change of tinyctl's own.
	TakenFrom []string `json:"takenFrom,omitempty"`
	// ResourceVersion is the version a write left the object at (empty
	// when nothing was written, or for a delete).
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// Wrote reports whether the result involved a write to the API server.
func (r Result) Wrote() bool { return r.Action.Wrote() }

// String renders "Deployment/ns/name configured".
func (r Result) String() string {
	return fmt.Sprintf("%s %s", r.Ref(), r.Action)
}

// Ref renders "Kind/namespace/name" ("Kind/name" when cluster-scoped).
func (r Result) Ref() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// ChangeSet is what ApplyAll did, one Result per object in apply order.
type ChangeSet []Result

// Wrote reports whether any object was written.
func (cs ChangeSet) Wrote() bool {
	for _, r := range cs {
		if r.Wrote() {
			return true
		}
	}
	return false
}
