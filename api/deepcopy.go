package api

import (
	"maps"
	"slices"
)

// DeepCopy returns a copy of c that shares no memory with it: maps, slices
// and pointers are copied, and nil stays nil (so an empty list and an absent
// one still encode differently).
func (c Component) DeepCopy() Component {
	out := c
	out.Metadata.Labels = maps.Clone(c.Metadata.Labels)
	out.Metadata.Annotations = maps.Clone(c.Metadata.Annotations)
	out.Spec = c.Spec.deepCopy()
	return out
}

func (s Spec) deepCopy() Spec {
	out := s
	out.Command = slices.Clone(s.Command)
	out.Args = slices.Clone(s.Args)
	out.Env = slices.Clone(s.Env)
	if s.Resources != nil {
		out.Resources = &Resources{
			Requests: maps.Clone(s.Resources.Requests),
			Limits:   maps.Clone(s.Resources.Limits),
		}
	}
	out.Jobs.Subjects = slices.Clone(s.Jobs.Subjects)
	out.Jobs.Publish = slices.Clone(s.Jobs.Publish)
	out.Jobs.Consumer.Backoff = slices.Clone(s.Jobs.Consumer.Backoff)
	if s.Scaling != nil {
		sc := *s.Scaling
		out.Scaling = &sc
	}
	if s.Replicas != nil {
		r := *s.Replicas
		out.Replicas = &r
	}
	out.Egress = s.Egress.deepCopy()
	out.Placement = s.Placement.deepCopy()
	return out
}

func (e Egress) deepCopy() Egress {
	out := e
	if e.Allow == nil {
		return out
	}
	out.Allow = make([]EgressRule, len(e.Allow))
	for i, r := range e.Allow {
		r.Except = slices.Clone(r.Except)
		r.PodLabels = maps.Clone(r.PodLabels)
		r.Ports = slices.Clone(r.Ports)
		out.Allow[i] = r
	}
	return out
}

func (p *Placement) deepCopy() *Placement {
	if p == nil {
		return nil
	}
	return &Placement{
		Clusters:        slices.Clone(p.Clusters),
		ClusterSelector: p.ClusterSelector.DeepCopy(),
	}
}
