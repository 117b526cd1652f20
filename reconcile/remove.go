package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/render"
)

// errNotPlaced means the component does not select this cluster: its
// children here were removed and it has no status here.
var errNotPlaced = errors.New("component is not placed on this cluster")

// remove handles an explicit delete or purge marker: the component's
// Kubernetes children go, its stream goes only under deletion.stream
// Delete, and its status record is removed. It is the only path that
// deletes, and only a marker leads here.
func (c *Controller) remove(ctx context.Context, key string, e specEntry) error {
	ns, name, err := api.ParseKey(key)
	if err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Msg("delete marker for a key that names no component; nothing to remove")
		return nil
	}
	if _, err := c.deps.Specs.Get(ctx, key); err == nil {
		return nil // re-created since: the put wins and will be reconciled
	} else if !errors.Is(err, bus.ErrNotFound) {
		return stepError("read latest revision", err)
	}
	if err := c.deleteChildren(ctx, ns, name, nil); err != nil {
		return err
	}
	act := api.Retained
	if c.streamPolicy(ctx, key, e) == api.Delete {
		if act, err = c.deps.Streams.Delete(ctx, render.StreamName(ns, name)); err != nil {
			return stepError("delete stream", err)
		}
	}
	if act == api.Deleted {
		zerolog.Ctx(ctx).Info().Str("stream", render.StreamName(ns, name)).Msg("stream deleted (deletion.stream: Delete)")
	}
	return c.removeStatus(ctx, key)
}

// streamPolicy returns the deletion.stream of the last value put before the
// marker, read from the cache or else the key's history. Anything unknown
// (a purge dropped the history, the value no longer decodes) keeps the
// stream: losing queued jobs needs an explicit Delete.
func (c *Controller) streamPolicy(ctx context.Context, key string, e specEntry) string {
	value := e.prev
	if value == nil {
		hist, err := c.deps.Specs.History(ctx, key)
		if err != nil {
			return api.Retain
		}
		for _, h := range hist {
			if h.Op == kv.OpPut {
				value = h.Value
			}
		}
	}
	comp, err := api.Decode(value)
	if err != nil {
		return api.Retain
	}
	return api.Default(comp).Spec.Deletion.Stream
}

// unplace removes the children of a component that no longer selects this
// cluster. The stream is kept.
func (c *Controller) unplace(ctx context.Context, comp api.Component) error {
	if err := c.guard(ctx, api.KeyOf(comp), c.revisionOf(api.KeyOf(comp))); err != nil {
		return err
	}
	if err := c.deleteChildren(ctx, comp.Metadata.Namespace, comp.Metadata.Name, nil); err != nil {
		return err
	}
	if err := c.removeStatus(ctx, api.KeyOf(comp)); err != nil {
		return err
	}
	return errNotPlaced
}

func (c *Controller) revisionOf(key string) uint64 {
	e, _ := c.specs.get(key)
	return e.rev
}

// prune deletes live children of the component that the spec no longer
// wants (the ScaledObject once scaling is removed).
func (c *Controller) prune(ctx context.Context, comp api.Component, desired []*unstructured.Unstructured) error {
	return c.deleteChildren(ctx, comp.Metadata.Namespace, comp.Metadata.Name, desired)
}

// deleteChildren deletes every live child of namespace/name that is not in
// keep.
func (c *Controller) deleteChildren(ctx context.Context, ns, name string, keep []*unstructured.Unstructured) error {
	for _, ch := range c.children.of(ns, name) {
		if wanted(ch, keep) {
			continue
		}
		res, err := c.deps.Applier.Delete(ctx, ch.kind.gvk, ch.namespace, ch.name)
		if err != nil {
			return fmt.Errorf("prune: %w", err)
		}
		c.obs.Applied(res)
		zerolog.Ctx(ctx).Info().Str("object", res.Ref()).Str("action", string(res.Action)).Msg("deleted")
	}
	return nil
}

func wanted(ch child, keep []*unstructured.Unstructured) bool {
	for _, k := range keep {
		if k.GroupVersionKind().GroupKind() == ch.kind.gvk.GroupKind() && k.GetName() == ch.name && k.GetNamespace() == ch.namespace {
			return true
		}
	}
	return false
}
