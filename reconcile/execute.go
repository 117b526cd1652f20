package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/render"
)

// errSuperseded means a newer revision (or a delete) of the key exists; the
// watch will deliver it and the key will be reconciled again.
var errSuperseded = errors.New("superseded by a newer revision")

// guardFresh is how old the guard's read may be when the children are
// applied; an older one is made again. Healthy JetStream steps take
// milliseconds, so the second read happens only when one was slow.
const guardFresh = 250 * time.Millisecond

// sync reconciles one key from its latest cached entry: gather, decide,
// execute, record.
func (c *Controller) sync(ctx context.Context, key string) error {
	in, ok, err := c.gather(ctx, key)
	if !ok || err != nil {
		return err
	}
	p := decide(in)
	ctx = withReconciling(ctx, key, p.rev)
	switch p.kind {
	case planRemove:
		return c.remove(ctx, p)
	case planUnplace:
		return c.unplace(ctx, p)
	case planHold:
		zerolog.Ctx(ctx).Warn().Str("key", key).Err(p.err).Msg("unplace held: children kept")
		return c.writeStatus(ctx, heldStatus(in, p))
	case planBehind:
		zerolog.Ctx(ctx).Warn().Str("key", key).Err(p.err).Msg("revision behind: nothing applied or deleted")
		return c.writeStatus(ctx, heldStatus(in, p))
	case planSuspend:
		return c.writeStatus(ctx, suspendedStatus(in, p))
	}
	kids, err := c.execute(ctx, p)
	if errors.Is(err, errSuperseded) {
		return nil
	}
	if werr := c.writeStatus(ctx, recordOf(in, p, kids, err, c.health(p))); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// gather collects the input of decide for key; ok is false when the key
// is not known (nothing to do).
func (c *Controller) gather(ctx context.Context, key string) (input, bool, error) {
	e, ok := c.specs.get(key)
	if !ok {
		return input{}, false, nil
	}
	if e.deleted && !e.policyKnown {
		hist, err := c.deps.Specs.History(ctx, key)
		if err != nil && !isNotFound(err) {
			return input{}, false, stepError("read history", err)
		}
		e.deleteStream = lastPutDeletesStream(hist)
	}
	in := input{key: key, entry: e, settings: c.cfg.Cluster, now: c.clock.Now(),
		minting: c.deps.Minter != nil || c.deps.Tenants != nil, ttl: c.cfg.CredentialsTTL, tls: c.cfg.WorkerTLS, acceptUnplace: c.accepted[key],
		cluster: cluster.Identity{Name: c.cfg.Cluster.Name, Labels: c.cfg.ClusterLabels}, bucket: c.bucketName(),
		policy: namespacePolicy{allowed: c.cfg.Namespaces, denied: c.cfg.DenyNamespaces, create: c.cfg.CreateNamespaces,
			tenancy: c.cfg.Tenancy, accounts: c.cfg.ServiceAccountNamespaces}}
	if ns, name, err := api.ParseKey(key); err == nil {
		in.live = c.children.of(ns, name)
		if c.deps.Tenants != nil {
			in.settings.NATS.Account = c.deps.Tenants.Account(ns)
		}
	}
	if prev, ok := c.status.get(key); ok {
		in.prev = &prev
	}
	return in, true, nil
}

// execute carries out a planApply (or reports a planInvalid's error): it
// checks the namespace, guards against resurrection, ensures the stream
// and consumer, applies the children in order and prunes. It returns the
// children it manages.
func (c *Controller) execute(ctx context.Context, p plan) ([]api.Child, error) {
	if p.kind == planInvalid {
		return nil, p.err
	}
	if err := c.ensureNamespace(ctx, p.namespace); err != nil {
		return nil, err
	}
	desired, refused := c.children.withoutRefused(p.desired)
	// The children the caches cannot answer for (a name someone else's
	// object holds, a kind without an informer) are read while the
	// revision is checked and the stream ensured, not one by one before
	// each apply; a new component's are known absent and not read at all
	// (others.go). A reconcile that ends early cancels the reads.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	live := c.deps.Kube.Prefetch(ctx, desired, c.children.get)
	checked := c.clock.Now()
	if err := c.guard(ctx, p.key, p.rev, false); err != nil {
		return nil, err
	}
	minter, err := c.tenant(ctx, p.namespace)
	if err != nil {
		return nil, err
	}
	if err := c.streamStep(ctx, p); err != nil {
		return nil, err
	}
	var creds []api.Child
	if p.creds != nil {
		secret, err := c.ensureCredentials(ctx, minter, p.namespace, p.objs.Deployment.Name, p.creds)
		if err != nil {
			return nil, err
		}
		creds = append(creds, secret)
		c.scheduleRotation(p.key, secret.Expires)
	}
	if c.clock.Since(checked) > guardFresh {
		// The stream or credentials took long enough (a JetStream leader
		// election) for a delete to have landed since: check again
		// rather than create a Deployment the bucket no longer holds.
		if err := c.guard(ctx, p.key, p.rev, false); err != nil {
			return creds, err
		}
	}
	started := c.clock.Now()
	kids, err := c.applyChildren(ctx, p, desired, live)
	c.obs.Stepped(StepKubernetes, c.clock.Since(started))
	kids = append(creds, kids...)
	if apierrors.IsNotFound(err) {
		c.namespaces.remove(p.namespace) // the namespace went away: check it again next time
	}
	if err != nil && !errors.Is(err, apply.ErrKindNotInstalled) {
		return kids, err
	}
	if perr := c.deleteChildren(ctx, p.prune); perr != nil {
		return kids, perr
	}
	jetstream := []api.Child{{Kind: api.KindStream, Name: p.objs.Stream.Name}, {Kind: api.KindConsumer, Name: p.objs.Consumer.Durable}}
	return append(jetstream, kids...), errors.Join(err, refused)
}

// streamStep ensures p's stream and consumer, timed as StepJetStream, and
// remembers what was ensured for the periodic check.
func (c *Controller) streamStep(ctx context.Context, p plan) error {
	started := c.clock.Now()
	fp, err := c.ensureStream(ctx, p.namespace, p.objs, p.fresh)
	c.obs.Stepped(StepJetStream, c.clock.Since(started))
	if err != nil {
		return err
	}
	c.settled.ensured(p.key, p.rev, fp)
	return nil
}

// guard re-reads the key's latest revision from the bucket, as its
// stream's leader has it (Specs.Latest: a replica still catching up would
// answer with an older revision, which could make a superseded put look
// current and resurrect a deleted component): when it is no longer rev (a
// newer put, or a delete that landed mid-reconcile; for a removal, a put
// that re-created the key), nothing is written and the newer entry wins. A
// read older than rev (from a bucket reached only through direct gets)
// says nothing about what is newer, so the step is retried rather than
// taking an older put for a re-creation and dropping a delete.
func (c *Controller) guard(ctx context.Context, key string, rev uint64, removing bool) error {
	started := c.clock.Now()
	latest, found, err := c.deps.Specs.Latest(ctx, key)
	c.obs.Stepped(StepGuard, c.clock.Since(started))
	switch {
	case err != nil:
		return stepError("read latest revision", err)
	case found && latest.Revision < rev:
		return stepError("read latest revision", &bus.TransientError{Op: "get " + key,
			Err: fmt.Errorf("a replica behind the watch answered with revision %d, older than revision %d", latest.Revision, rev)})
	case removing && found && !latest.Deleted:
		return errSuperseded
	case !removing && (!found || latest.Deleted || latest.Revision != rev):
		return errSuperseded
	}
	return nil
}

// ensureNamespace checks that the target namespace exists, creating it
// (fenced, through apply) when configured to.
func (c *Controller) ensureNamespace(ctx context.Context, ns string) error {
	if c.namespaces.has(ns) {
		return nil // seen before; forgotten when a write says it is gone
	}
	live, err := c.deps.Kube.Get(ctx, apply.Namespace, "", ns)
	if err != nil {
		return stepError("read namespace "+ns, err)
	}
	if live == nil && !c.cfg.CreateNamespaces {
		return fmt.Errorf("namespace %q: %w (create it, or run the controller with namespace creation enabled)", ns, ErrNamespaceMissing)
	}
	if live == nil {
		err := c.fenced(ctx, func(ctx context.Context) error {
			_, res, err := c.deps.Kube.Create(ctx, render.Namespace(ns))
			c.observe(ctx, res, err)
			return err
		})
		if err != nil {
			return stepError("create namespace "+ns, err)
		}
	}
	c.namespaces.add(ns)
	return nil
}

// tenant makes namespace ns's accounts exist (with Tenants) and returns
// the Minter of its workers (Deps.Minter without Tenants).
func (c *Controller) tenant(ctx context.Context, ns string) (Minter, error) {
	if c.deps.Tenants == nil {
		return c.deps.Minter, nil
	}
	var m Minter
	err := c.fenced(ctx, func(ctx context.Context) error {
		var err error
		m, err = c.deps.Tenants.Ensure(ctx, ns)
		return err
	})
	if err != nil {
		return nil, stepError("accounts of namespace "+ns, withRoomRemedy(err, jetstream.StreamConfig{}))
	}
	return m, nil
}

// ensureStream ensures the component's stream and consumer in namespace
// ns's account (fresh: it was never reconciled here) and returns the
// stream's live config's fingerprint.
func (c *Controller) ensureStream(ctx context.Context, ns string, objs render.Objects, fresh bool) (fp uint64, err error) {
	err = c.fenced(ctx, func(ctx context.Context) error {
		var s, cons action.Action
		var err error
		s, cons, fp, err = c.deps.Streams.Ensure(ctx, ns, objs.Stream, objs.Consumer, fresh)
		if err != nil {
			return stepError("stream "+objs.Stream.Name, withRoomRemedy(err, objs.Stream))
		}
		if s != action.Unchanged || cons != action.Unchanged {
			zerolog.Ctx(ctx).Info().Str("stream", string(s)).Str("consumer", string(cons)).
				Str("name", objs.Stream.Name).Msg("jetstream ensured")
		}
		return c.ensureDeadLetters(ctx, ns, objs)
	})
	return fp, err
}

// ensureDeadLetters ensures the dead-letter stream of a component with
// spec.jobs.deadLetter and moves into it the jobs that used up their
// deliveries since the last sweep (the advisories wake one too, see
// DeadLetters).
func (c *Controller) ensureDeadLetters(ctx context.Context, ns string, objs render.Objects) error {
	if objs.DeadLetters == nil {
		return nil
	}
	a, moved, err := c.deps.Streams.DeadLetters(ctx, ns, *objs.DeadLetters, objs.Stream.Name, objs.Consumer.Durable)
	if a != "" && a != action.Unchanged {
		zerolog.Ctx(ctx).Info().Str("stream", string(a)).Str("name", objs.DeadLetters.Name).Msg("dead-letter stream ensured")
	}
	c.deadLettered(ctx, objs.Stream.Name, moved)
	if err != nil {
		return stepError("stream "+objs.DeadLetters.Name, withRoomRemedy(err, *objs.DeadLetters))
	}
	return nil
}

// applyChildren applies desired (the plan's children less those of a
// kind the controller may not list) in order, each only if this component
// owns it or it does not exist. A kind that is not installed does not stop
// the others (the error then classifies as waiting).
func (c *Controller) applyChildren(ctx context.Context, p plan, desired []*unstructured.Unstructured,
	live func(*unstructured.Unstructured) (*metav1.PartialObjectMetadata, bool)) ([]api.Child, error) {
	owner := render.ComponentLabelValue(p.namespace, p.objs.Deployment.Name)
	var cs apply.ChangeSet
	c.own.writing(desired)
	err := c.fenced(ctx, func(ctx context.Context) (err error) {
		cs, err = c.deps.Kube.ApplyAll(ctx, desired, apply.SetOptions{
			Live:    live,
			Options: c.writeOptions(owner),
		})
		return err
	})
	if c.own.wrote(desired, cs, p.key, p.rev) {
		c.enqueue(p.key) // someone else changed a child while it was written
	}
	kids := make([]api.Child, 0, len(cs))
	for i, res := range cs {
		c.observe(ctx, res, nil)
		if res.Action == action.Failed || res.Action == action.Skipped {
			continue
		}
		kids = append(kids, api.Child{Kind: res.Kind, Namespace: res.Namespace, Name: res.Name,
			Hash: desired[i].GetAnnotations()[render.AnnotationContentHash]})
	}
	return kids, err
}

// remove handles an explicit delete or purge marker: the component's
// Kubernetes children go, its stream goes only when its last value said
// deletion.stream Delete, and its status record is removed. It is the
// only path that deletes a stream, and only a marker leads here.
func (c *Controller) remove(ctx context.Context, p plan) error {
	if err := c.guard(ctx, p.key, p.rev, true); err != nil {
		if errors.Is(err, errSuperseded) {
			return nil // re-created since: the put wins and will be reconciled
		}
		return err
	}
	if err := c.deleteChildren(ctx, p.prune); err != nil {
		return err
	}
	if err := c.deleteSecret(ctx, p); err != nil {
		return err
	}
	if p.deleteStream != "" {
		ns, _, _ := api.ParseKey(p.key)
		err := c.fenced(ctx, func(ctx context.Context) error {
			// The dead letters go with their queue (and stay with it).
			for _, stream := range []string{p.deleteStream, deadletter.StreamName(p.deleteStream)} {
				act, err := c.deps.Streams.Delete(ctx, ns, stream)
				if err != nil {
					return err
				}
				if act == action.Deleted {
					zerolog.Ctx(ctx).Info().Str("stream", stream).Msg("stream deleted (deletion.stream: Delete)")
				}
			}
			return nil
		})
		if err != nil {
			return stepError("delete stream", err)
		}
	}
	return c.removeStatus(ctx, p.key, p.rev, reasonRemoved)
}

// unplace removes the children of a component that no longer selects this
// cluster, and its status here. The stream is kept.
func (c *Controller) unplace(ctx context.Context, p plan) error {
	if err := c.guard(ctx, p.key, p.rev, false); err != nil {
		if errors.Is(err, errSuperseded) {
			return nil
		}
		return err
	}
	if err := c.deleteChildren(ctx, p.prune); err != nil {
		return err
	}
	if err := c.deleteSecret(ctx, p); err != nil {
		return err
	}
	return c.removeStatus(ctx, p.key, p.rev, reasonUnplaced)
}

// deleteSecret deletes the component's credentials Secret, if it has one
// and it still carries the component's label.
func (c *Controller) deleteSecret(ctx context.Context, p plan) error {
	ns, name, err := api.ParseKey(p.key)
	if p.deleteSecret == "" || err != nil {
		return nil
	}
	return c.deleteChildren(ctx, []child{{kind: secretKind, namespace: ns, name: p.deleteSecret,
		component: render.ComponentLabelValue(ns, name)}})
}

// scheduleRotation looks at key again when its credentials are due to be
// minted again. The key is not marked for a full reconcile now (that
// would turn every workload event until then into one): when it comes
// up, syncFor finds the credentials due (rotationDue).
func (c *Controller) scheduleRotation(key string, expires time.Time) {
	if expires.IsZero() {
		return
	}
	c.queue.AddAfter(key, max(c.rotateAt(expires).Sub(c.clock.Now()), 0))
}

// rotateAt is when credentials that expire at expires are minted again.
func (c *Controller) rotateAt(expires time.Time) time.Time {
	return expires.Add(-c.cfg.CredentialsTTL / 2)
}

// rotationDue reports whether st names credentials due to be minted again.
func (c *Controller) rotationDue(st api.Status) bool {
	for _, k := range st.Children {
		if !k.Expires.IsZero() && !c.clock.Now().Before(c.rotateAt(k.Expires)) {
			return true
		}
	}
	return false
}

// deleteChildren deletes each child, only if it still carries its
// component's label.
func (c *Controller) deleteChildren(ctx context.Context, kids []child) error {
	for _, ch := range kids {
		err := c.fenced(ctx, func(ctx context.Context) error {
			res, err := c.deps.Kube.Delete(ctx, ch.kind.gvk, ch.namespace, ch.name, c.writeOptions(ch.component)...)
			c.observe(ctx, res, err)
			return err
		})
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
	}
	return nil
}

// writeOptions are the options of every write of a child of component
// owner: only if it is the component's, stamped with this tenure's fencing
// token and refused where a newer tenure wrote.
func (c *Controller) writeOptions(owner string) []apply.Option {
	return []apply.Option{apply.Owned(render.LabelComponent, owner), apply.Fenced(c.fence.Token())}
}

// fenced runs one write under the fence.
func (c *Controller) fenced(ctx context.Context, write func(context.Context) error) error {
	ctx, cancel, err := c.fence.Check(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	return write(ctx)
}

// observe reports a write's result to the observer and the log.
func (c *Controller) observe(ctx context.Context, res apply.Result, err error) {
	if res.Kind == "" {
		return
	}
	if err != nil && res.Action == "" {
		res.Action = action.Failed
	}
	c.obs.Applied(res)
	c.recordWrite(ctx, res)
	if res.Wrote() {
		ev := zerolog.Ctx(ctx).Info().Str("object", res.Ref()).Str("action", string(res.Action))
		if len(res.TakenFrom) > 0 {
			ev = ev.Strs("takenFrom", res.TakenFrom) // another manager had changed fields tinyctl sets
		}
		ev.Msg("applied")
	}
}

// writeStatus records st unless it says the same as the last one written
// (unchanged conditions keep their transition time).
func (c *Controller) writeStatus(ctx context.Context, st api.Status) error {
	prev, had := c.status.get(st.Component)
	var prevp *api.Status
	if had {
		prevp = &prev
	}
	st = nextStatus(prevp, st, c.clock.Now().UTC())
	if had && prev.SameAs(st) {
		return nil
	}
	var rev uint64
	started := c.clock.Now()
	err := c.fenced(ctx, func(ctx context.Context) error {
		return checkedWrite(ctx, c.status.revision(st.Component), func(at uint64) (err error) {
			rev, err = c.deps.Statuses.Put(ctx, st, at)
			return err
		})
	})
	c.obs.Stepped(StepStatus, c.clock.Since(started))
	if err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	c.status.set(st, rev)
	for _, e := range conditionEvents(prevp, st) {
		c.record(e)
	}
	return nil
}

// checkedWrite makes a revision-checked write at rev and, when the record
// has moved on (someone else wrote it: most often a write of this process
// that timed out here but landed), once more at the revision it is at.
// The first attempt is the one that may be late: a write sent before the
// lease ran out and delayed in flight. The second is sent now, and only
// while ctx, bounded by the fence's deadline, has not ended by the wall
// clock: by a holder of the lease.
func checkedWrite(ctx context.Context, rev uint64, write func(at uint64) error) error {
	err := write(rev)
	var moved *bus.RevisionMismatchError
	if !errors.As(err, &moved) {
		return err
	}
	if dl, ok := ctx.Deadline(); ctx.Err() != nil || ok && !time.Now().Before(dl) {
		return err // retried as any failed write: through the fence again
	}
	return write(moved.Current)
}

// removeStatus deletes the status record of key if one was written, and
// records why (reasonRemoved, reasonUnplaced) at revision rev.
func (c *Controller) removeStatus(ctx context.Context, key string, rev uint64, why string) error {
	if _, ok := c.status.get(key); !ok {
		return nil
	}
	var marker uint64
	err := c.fenced(ctx, func(ctx context.Context) error {
		return checkedWrite(ctx, c.status.revision(key), func(at uint64) (err error) {
			marker, err = c.deps.Statuses.Delete(ctx, key, c.cfg.Cluster.Name, at)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("delete status: %w", err)
	}
	c.status.forget(key, marker)
	c.record(removalEvent(key, rev, why, c.cfg.Cluster.Name))
	return nil
}
