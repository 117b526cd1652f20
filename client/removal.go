package client

import (
	"fmt"
	"io"
	"slices"

	"github.com/tinyctl/tinyctl/api/validate"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// Removal is what deleting a component leads to: the controller removes
// its Kubernetes objects, and its stream and consumer unless the stream
// is retained.
type Removal struct {
	Key      string
	Revision uint64
	// Objects are the Kubernetes children, "Kind/namespace/name".
	Objects []string
	// Stream and Consumer are the component's JetStream names.
	Stream   string
	Consumer string
	// StreamPolicy is the value's spec.deletion.stream: api.Retain or
	// api.Delete. A value that does not decode keeps its stream.
	StreamPolicy string
	// Problem says why the stored value could not be read; Objects then
	// lists the children the key implies.
	Problem error
}

// PlanRemoval works out what deleting the component whose latest revision
// is e removes,
// rendering it for the default cluster to name its children. It never
// fails: a value that does not decode or render yields the children the
// key implies and a Problem.
func PlanRemoval(e Revision) Removal {
	ns, name, err := api.ParseKey(e.Key)
	r := Removal{Key: e.Key, Revision: e.Revision, StreamPolicy: api.Retain,
		Stream: render.StreamName(ns, name), Consumer: render.ConsumerName(ns, name)}
	if err != nil {
		r.Problem = err
		return r
	}
	objs, policy, err := children(e)
	if err != nil {
		r.Problem = err
		r.Objects = withSecret([]string{"ScaledObject/" + ns + "/" + name + " (if any)", "PodDisruptionBudget/" + ns + "/" + name + " (if any)",
			"Deployment/" + ns + "/" + name, "NetworkPolicy/" + ns + "/" + name}, ns, name)
		return r
	}
	r.Objects, r.StreamPolicy = withSecret(objs, ns, name), policy
	return r
}

// withSecret adds the credentials Secret a controller that mints them
// removes last.
func withSecret(objs []string, ns, name string) []string {
	return append(objs, "Secret/"+ns+"/"+render.CredentialsSecretName(name)+" (if the cluster mints credentials)")
}

// children renders the stored value and names its Kubernetes objects.
func children(e Revision) ([]string, string, error) {
	if e.Err != nil {
		return nil, "", e.Err
	}
	c, err := validate.Normalize(e.Component)
	if err != nil {
		return nil, "", err
	}
	objs, err := render.Render(c, e.Revision, render.DefaultCluster())
	if err != nil {
		return nil, "", err
	}
	kids, err := objs.Children()
	if err != nil {
		return nil, "", err
	}
	// The controller removes them in the reverse of apply order.
	out := make([]string, 0, len(kids))
	for _, k := range slices.Backward(kids) {
		out = append(out, k.GetKind()+"/"+k.GetNamespace()+"/"+k.GetName())
	}
	return out, c.Spec.Deletion.Stream, nil
}

// Describe writes, for a person about to confirm, what deleting (or with
// purge, purging) the component removes and what it keeps.
func (r Removal) Describe(w io.Writer, purge bool) {
	verb := "deleted"
	if purge {
		verb = "purged (its history is erased too: it cannot be rolled back)"
	}
	fmt.Fprintf(w, "Component %s (revision %d) will be %s.\n", r.Key, r.Revision, verb)
	if r.Problem != nil {
		fmt.Fprintf(w, "Its stored value cannot be read (%s), so its objects are named from its key.\n", firstLine(r.Problem.Error()))
	}
	fmt.Fprintln(w, "The controller then removes:")
	for _, o := range r.Objects {
		fmt.Fprintf(w, "  %s\n", o)
	}
	switch {
	case r.StreamPolicy == api.Delete && purge:
		fmt.Fprintf(w, "The stream %s and its consumer %s are kept with any queued jobs: the purge erases the spec that asks "+
			"for them to go (spec.deletion.stream: Delete); delete without --purge to remove them too.\n", r.Stream, r.Consumer)
	case r.StreamPolicy == api.Delete:
		fmt.Fprintf(w, "The stream %s, its consumer %s and every job still queued in it are deleted (spec.deletion.stream: Delete).\n", r.Stream, r.Consumer)
	default:
		fmt.Fprintf(w, "The stream %s and its consumer %s are kept with any queued jobs (spec.deletion.stream: Retain).\n", r.Stream, r.Consumer)
	}
}
