package apply

import "fmt"

// FieldManager is the server-side apply field manager of every tinyctl write.
const FieldManager = "tinyctl"

// Action says what an Apply or Delete did.
type Action string

// Actions.
const (
	Created    Action = "created"
	Configured Action = "configured"
	Unchanged  Action = "unchanged"
	Deleted    Action = "deleted"
	Absent     Action = "absent" // a delete found nothing to remove
	Failed     Action = "failed" // the write was refused or did not reach the server
)

// Result describes one object and what happened to it.
type Result struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Action    Action `json:"action"`
}

// Wrote reports whether the result involved a write to the API server.
func (r Result) Wrote() bool {
	return r.Action == Created || r.Action == Configured || r.Action == Deleted
}

// String renders "Deployment/ns/name configured".
func (r Result) String() string {
	return fmt.Sprintf("%s %s", r.Ref(), r.Action)
}

// Ref renders "Kind/namespace/name".
func (r Result) Ref() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}
