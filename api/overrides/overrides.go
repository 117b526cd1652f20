// Package overrides resolves a component for one cluster: the entries of
// spec.overrides that select the cluster (by name, by labels or both) are
// merged into the spec in list order. Two of them setting one field to
// different values on the same cluster is a conflict, and a merged spec
// that breaks a rule no single override breaks (a minReplicas above the
// maxReplicas another one sets) is invalid; both are errors of that cluster
// only, reported with the field paths of the overrides involved.
//
// Each override is validated on its own by package validate; Resolve
// expects a component that passed it.
package overrides

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
)

// Resolve returns c as it runs on cl: a copy with every override that
// selects cl merged in (see the package comment) and spec.overrides
// emptied, so that what is rendered for cl does not change when an
// override for another cluster does. c must be a valid component. On a
// conflict or an invalid merged value it returns an *Error listing every
// problem.
func Resolve(c api.Component, cl cluster.Identity) (api.Component, error) {
	out := c.DeepCopy()
	out.Spec.Overrides = nil
	m := merger{spec: &out.Spec, cluster: cl.Name, origins: map[string]origin{}}
	path := field.NewPath("spec", "overrides")
	for i, o := range c.Spec.Overrides {
		if cl.SelectedBy(o) {
			m.merge(o, path.Index(i))
		}
	}
	m.checkScaling()
	m.checkResources()
	if len(m.errs) > 0 {
		return api.Component{}, &Error{Cluster: cl.Name, Errors: m.errs}
	}
	return out, nil
}

// Error is a component that cannot run on Cluster as its overrides say.
// It matches api.ErrInvalid with errors.Is: only a new revision can fix it.
type Error struct {
	Cluster string
	Errors  field.ErrorList
}

// Error lists every problem, on one line when there is one.
func (e *Error) Error() string {
	if len(e.Errors) == 1 {
		return fmt.Sprintf("overrides for cluster %q: %s", e.Cluster, e.Errors[0].Error())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "overrides for cluster %q (%d problems):", e.Cluster, len(e.Errors))
	for _, fe := range e.Errors {
		b.WriteString("\n* ")
		b.WriteString(fe.Error())
	}
	return b.String()
}

// Is reports whether target is api.ErrInvalid.
func (e *Error) Is(target error) bool { return target == api.ErrInvalid }
