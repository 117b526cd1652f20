package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/api/decode"
)

// SetSuspended suspends (or resumes) component namespace/name: with
// cluster "" everywhere (spec.suspend, and every override's suspend
// cleared), else on that cluster only (an override selecting it by name).
// The latest value is changed in place and written back as a new revision
// only if that is still the latest (a racing write is a *ConflictError);
// nothing else of the spec changes, and nothing is written when it already
// says so (Action unchanged, the current revision). A component that does
// not exist is ErrNotFound.
func (c *Client) SetSuspended(ctx context.Context, namespace, name, cluster string, suspend bool) (PublishResult, error) {
	e, err := c.Get(ctx, namespace, name)
	if err != nil {
		return PublishResult{}, err
	}
	comp, err := decode.Component(e.Value)
	if err != nil {
		return PublishResult{}, fmt.Errorf("component %s/%s at revision %d does not decode, fix it with tinyctl apply first: %w", namespace, name, e.Revision, err)
	}
	if cluster == "" {
		setEverywhere(&comp.Spec, suspend)
	} else {
		setOn(&comp.Spec, cluster, suspend)
	}
	value, err := api.Canonical(comp)
	if err != nil {
		return PublishResult{}, err
	}
	if string(value) == string(e.Value) {
		return PublishResult{Key: e.Key, Action: action.Unchanged, Revision: e.Revision}, nil
	}
	return publish(ctx, c.specs, e.Key, value, PublishOptions{IfRevision: &e.Revision})
}

// setEverywhere sets spec.suspend and clears every override's suspend,
// dropping overrides left setting nothing.
func setEverywhere(s *api.Spec, suspend bool) {
	s.Suspend = suspend
	for i := range s.Overrides {
		s.Overrides[i].Suspend = nil
	}
	s.Overrides = slices.DeleteFunc(s.Overrides, func(o api.Override) bool { return !o.SetsSomething() })
}

// setOn makes cluster suspended as asked: through the override selecting
// it alone by name (made when missing), which is dropped again when it
// would only repeat spec.suspend.
func setOn(s *api.Spec, cluster string, suspend bool) {
	i := slices.IndexFunc(s.Overrides, func(o api.Override) bool {
		return o.ClusterSelector == nil && slices.Equal(o.Clusters, []string{cluster})
	})
	if i < 0 {
		if suspend == s.Suspend {
			return
		}
		s.Overrides = append(s.Overrides, api.Override{Clusters: []string{cluster}})
		i = len(s.Overrides) - 1
	}
	if suspend == s.Suspend {
		s.Overrides[i].Suspend = nil
		if !s.Overrides[i].SetsSomething() {
			s.Overrides = slices.Delete(s.Overrides, i, i+1)
		}
		return
	}
	s.Overrides[i].Suspend = &suspend
}
