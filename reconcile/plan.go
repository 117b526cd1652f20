package reconcile

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/overrides"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/api/validate"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// The loop decides what to do with a key by one pure function, decide,
// over everything gathered beforehand (the cached entry, this cluster's
// identity and namespace policy, the children the informers see), and
// only then acts on the plan (execute.go). The decisions are therefore
// table-tested without NATS or an API server.

// input is everything one reconcile decides from.
type input struct {
	key      string
	entry    specEntry
	cluster  cluster.Identity
	policy   namespacePolicy
	settings render.Cluster
	// live are the component's children in this cluster.
	live []child
	// prev is the last status this cluster recorded for the key (nil:
	// none); now is the time the plan is made at.
	prev *api.Status
	now  time.Time
	// minting says the controller mints worker credentials, for ttl, and
	// hands workers the TLS files tls.
	minting bool
	ttl     time.Duration
	tls     TLSFiles
	// acceptUnplace lets an unplace go ahead that only this cluster's
	// changed identity causes (see holdUnplace).
	acceptUnplace bool
	// bucket names the spec bucket entry comes from (Specs.Incarnation).
	bucket string
}

// planKind says what a plan does.
type planKind int

const (
	// planApply ensures the stream and consumer, applies the children and
	// prunes those the spec no longer wants.
	planApply planKind = iota
	// planRemove handles an explicit delete marker: the children go, the
	// stream only when the last value asked for it, and the status.
	planRemove
	// planUnplace removes the children of a component whose placement
	// does not select this cluster (the stream stays) and its status.
	planUnplace
	// planInvalid records why the revision cannot be applied (the error is
	// permanent) and touches nothing in the cluster.
	planInvalid
	// planHold keeps the children of a component that no longer selects
	// this cluster only because the cluster's own name or labels changed,
	// and records why (the error) on its status.
	planHold
	// planBehind touches nothing for a revision older than one the
	// cluster applied from the same bucket (see behind), and records why
	// on its status, which keeps the newer revision as observed.
	planBehind
	// planSuspend touches nothing of a component suspended on this
	// cluster (spec.suspend), and records that on its status.
	planSuspend
)

func (k planKind) String() string {
	return [...]string{"apply", "remove", "unplace", "invalid", "hold", "behind", "suspend"}[k]
}

// plan is what one reconcile will do.
type plan struct {
	kind planKind
	key  string
	rev  uint64
	// namespace is the component's target namespace (planApply).
	namespace string
	objs      render.Objects
	// desired are the Kubernetes children in apply order (planApply).
	desired []*unstructured.Unstructured
	// prune are live children to delete.
	prune []child
	// deleteStream names the stream to delete ("" keeps it).
	deleteStream string
	// creds are the worker's credentials to ensure (planApply, minting).
	creds *credsPlan
	// deleteSecret names the credentials Secret to delete ("" when there is
	// none).
	deleteSecret string
	// err says why a planInvalid revision cannot be applied.
	err error
	// fresh: the component has no status record here, so it was never
	// reconciled here and its stream most likely does not exist yet.
	fresh bool
}

// decide turns in into a plan. It reads nothing and writes nothing. A
// component placed here is rendered as its overrides resolve for this
// cluster; overrides that conflict here stall this cluster only.
func decide(in input) plan {
	p := plan{key: in.key, rev: in.entry.rev, deleteSecret: secretOf(in)}
	if err := behind(in); err != nil {
		p.kind, p.err, p.deleteSecret = planBehind, err, ""
		return p
	}
	if in.entry.deleted {
		p.kind, p.prune = planRemove, in.live
		if in.entry.deleteStream {
			if ns, name, err := api.ParseKey(in.key); err == nil {
				p.deleteStream = render.StreamName(ns, name)
			}
		}
		return p
	}
	comp, err := component(in.key, in.entry.value, in.policy)
	if err != nil {
		p.kind, p.err = planInvalid, err
		return p
	}
	resolved, overridesErr := overrides.Resolve(comp, in.cluster)
	if suspended(comp, resolved, overridesErr) {
		p.kind, p.deleteSecret = planSuspend, "" // not even an unplace prunes
		return p
	}
	if !in.cluster.Places(comp) {
		p.kind, p.prune = planUnplace, in.live
		if err := holdUnplace(in, comp); err != nil && !in.acceptUnplace {
			p.kind, p.prune, p.err = planHold, nil, err
		}
		return p
	}
	// This cluster's namespace policy matters only where the component is
	// placed: a component placed elsewhere is nothing to this cluster.
	if err := errors.Join(in.policy.admits(comp.Metadata.Namespace), in.policy.admitsAccount(comp)); err != nil {
		p.kind, p.err = planInvalid, err
		return p
	}
	if overridesErr != nil {
		p.kind, p.err = planInvalid, withClass(Permanent, reasons.InvalidOverride, overridesErr)
		return p
	}
	comp = resolved
	objs, err := render.Render(comp, in.entry.rev, in.settings)
	if err == nil {
		p.desired, err = objs.Children()
	}
	if err != nil {
		p.kind, p.err = planInvalid, stepError("render", err)
		return p
	}
	p.kind, p.objs, p.namespace, p.fresh = planApply, objs, comp.Metadata.Namespace, in.prev == nil
	p.prune, p.deleteSecret = unwanted(in.live, p.desired), ""
	if in.minting {
		p.creds = planCredentials(comp, in.prev, in.tls, in.settings.NATS.JSAPIPrefix, in.ttl, in.now)
	}
	return p
}

// secretOf names the credentials Secret a removal must delete: the one the
// last status recorded, or the one minting would have made.
func secretOf(in input) string {
	if in.prev != nil {
		if s, ok := in.prev.ChildOfKind(kindSecret); ok {
			return s.Name
		}
	}
	if _, name, err := api.ParseKey(in.key); err == nil && in.minting {
		return render.CredentialsSecretName(name)
	}
	return ""
}

// component decodes, defaults and validates a stored value (its subjects
// scoped to its namespace) and checks that it belongs under key. Every
// failure is permanent and matches api.ErrInvalid.
func component(key string, value []byte, policy namespacePolicy) (api.Component, error) {
	comp, err := decode.Component(value)
	if err != nil {
		var de *decode.Error
		if errors.As(err, &de) && de.Partial != nil {
			if _, verr := validate.Check(*de.Partial, policy.tenancy); verr != nil {
				return comp, errors.Join(err, verr) // every problem in one status message
			}
		}
		return comp, err
	}
	if comp, err = validate.Check(comp, policy.tenancy); err != nil {
		return comp, err
	}
	return comp, api.CheckKey(key, comp)
}

// admits says whether components may go to namespace ns: a listed one,
// or, when none is listed, any but the denied ones.
func (p namespacePolicy) admits(ns string) error {
	switch {
	case len(p.allowed) > 0 && !slices.Contains(p.allowed, ns):
		return withClass(Permanent, reasons.NamespaceNotAllowed,
			fmt.Errorf("namespace %q is not one this controller manages (%v)", ns, p.allowed))
	case len(p.allowed) == 0 && slices.Contains(p.denied, ns):
		return withClass(Permanent, reasons.NamespaceNotAllowed,
			fmt.Errorf("namespace %q is reserved: this controller manages every namespace but %v", ns, p.denied))
	}
	return nil
}

// admitsAccount says whether comp may run as the ServiceAccount it names
// (none needs no leave).
func (p namespacePolicy) admitsAccount(comp api.Component) error {
	name, ns := comp.Spec.ServiceAccountName, comp.Metadata.Namespace
	if name == "" || slices.Contains(p.accounts, "*") || slices.Contains(p.accounts, ns) {
		return nil
	}
	return withClass(Permanent, reasons.ServiceAccountNotAllowed,
		fmt.Errorf("spec.serviceAccountName %q: this cluster's operator lets no component of namespace %q run as a ServiceAccount of its own "+
			"(tinyctl serve --service-account-namespaces, chart value serviceAccountNamespaces)", name, ns))
}

// streamPolicyDeletes reports whether the stored value asks for its stream
// to be deleted with it. Anything unreadable keeps the stream: losing
// queued jobs needs an explicit Delete.
func streamPolicyDeletes(value []byte) bool {
	comp, err := decode.Component(value)
	return err == nil && defaults.Apply(comp).Spec.Deletion.Stream == api.Delete
}

// lastPutDeletesStream is streamPolicyDeletes of the last value put in a
// key's history (oldest first).
func lastPutDeletesStream(hist []Entry) bool {
	for i := len(hist) - 1; i >= 0; i-- {
		if !hist[i].Deleted {
			return streamPolicyDeletes(hist[i].Value)
		}
	}
	return false
}

// unwanted returns the live children that desired does not name.
func unwanted(live []child, desired []*unstructured.Unstructured) []child {
	var out []child
	for _, ch := range live {
		if !slices.ContainsFunc(desired, ch.is) {
			out = append(out, ch)
		}
	}
	return out
}
