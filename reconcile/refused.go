package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rs/zerolog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ErrKindForbidden means the API server refuses to let the controller
// list an optional child kind (RBAC without ScaledObjects, say). The loop
// runs without that kind: children of it are not applied, and the
// component waits (reason KindForbidden) until a recheck finds the kind
// listable.
var ErrKindForbidden = errors.New("the controller may not list this kind")

// refuse records that the API server refuses (err) or allows (nil) the
// listing of optional kind k, logging each change once.
func (c *children) refuse(ctx context.Context, k childKind, err error) {
	gk := k.gvk.GroupKind()
	c.mu.Lock()
	_, was := c.refused[gk]
	if err != nil {
		c.refused[gk] = err
	} else {
		delete(c.refused, gk)
	}
	c.mu.Unlock()
	log := zerolog.Ctx(ctx)
	switch {
	case err != nil && !was:
		log.Warn().Err(err).Str("kind", k.gvk.Kind).
			Msg("not watching an optional kind the API server refuses to list; components that need it wait with reason KindForbidden")
	case err == nil && was:
		log.Info().Str("kind", k.gvk.Kind).Msg("optional kind may be listed now; watching it")
	}
}

// unwatched describes each optional kind not watched because the API
// server refuses to list it, sorted.
func (c *children) unwatched() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.refused))
	for gk, err := range c.refused {
		out = append(out, fmt.Sprintf("%s: %v", gk.Kind, err))
	}
	slices.Sort(out)
	return out
}

// withoutRefused returns objs less those of a refused kind, and an error
// wrapping ErrKindForbidden that names each one left out (nil when none).
func (c *children) withoutRefused(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.refused) == 0 {
		return objs, nil
	}
	kept := make([]*unstructured.Unstructured, 0, len(objs))
	var errs []error
	for _, o := range objs {
		cause, refused := c.refused[o.GroupVersionKind().GroupKind()]
		if !refused {
			kept = append(kept, o)
			continue
		}
		errs = append(errs, fmt.Errorf("%s/%s/%s not applied: %w (%v); grant the controller list and watch on it",
			o.GetKind(), o.GetNamespace(), o.GetName(), ErrKindForbidden, cause))
	}
	return kept, errors.Join(errs...)
}

// Unwatched describes each optional child kind the loop runs without
// because the API server refuses to let it list that kind ("ScaledObject:
// ... forbidden ..."), and pods when Ready is judged without them; empty
// when every served kind is watched.
func (c *Controller) Unwatched() []string {
	out := c.children.unwatched()
	if c.workloads != nil {
		if why := c.workloads.Unwatched(); why != "" {
			out = append(out, why)
		}
	}
	return out
}
