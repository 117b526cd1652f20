package api

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// DeepCopy returns a copy of c that shares no memory with it: maps, slices
// and pointers are copied, and nil stays nil (so an empty list and an absent
// one still encode differently). It is written by hand rather than by
// deepcopy-gen: value receivers keep api's exports few (generated code adds
// two pointer methods per type), and TestDeepCopyCopiesEveryReference walks
// every field by reflection, so a field added and not copied fails it.
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
	out.Env = copyEnv(s.Env)
	out.EnvFrom = copyEnvFrom(s.EnvFrom)
	out.Volumes = copyVolumes(s.Volumes)
	out.ImagePullSecrets = slices.Clone(s.ImagePullSecrets)
	out.NodeSelector = maps.Clone(s.NodeSelector)
	out.Tolerations = copyTolerations(s.Tolerations)
	out.Affinity = s.Affinity.DeepCopy()
	if s.Probes != nil {
		p := *s.Probes
		p.Liveness, p.Readiness = s.Probes.Liveness.DeepCopy(), s.Probes.Readiness.DeepCopy()
		out.Probes = &p
	}
	out.TopologySpreadConstraints = copySpread(s.TopologySpreadConstraints)
	out.TerminationGracePeriodSeconds = clonePtr(s.TerminationGracePeriodSeconds)
	out.Resources = s.Resources.deepCopy()
	out.Jobs.Subjects = slices.Clone(s.Jobs.Subjects)
	out.Jobs.Publish = slices.Clone(s.Jobs.Publish)
	out.Jobs.Consumer.Backoff = slices.Clone(s.Jobs.Consumer.Backoff)
	if s.Scaling != nil {
		sc := *s.Scaling
		out.Scaling = &sc
	}
	out.Replicas = clonePtr(s.Replicas)
	out.Egress = s.Egress.deepCopy()
	out.Placement = s.Placement.deepCopy()
	out.Overrides = copyOverrides(s.Overrides)
	return out
}

func (r *Resources) deepCopy() *Resources {
	if r == nil {
		return nil
	}
	return &Resources{Requests: maps.Clone(r.Requests), Limits: maps.Clone(r.Limits)}
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

// copyOverrides copies every override; nil stays nil.
func copyOverrides(overrides []Override) []Override {
	if overrides == nil {
		return nil
	}
	out := make([]Override, len(overrides))
	for i, o := range overrides {
		o.Clusters = slices.Clone(o.Clusters)
		o.ClusterSelector = o.ClusterSelector.DeepCopy()
		o.Replicas = clonePtr(o.Replicas)
		o.MinReplicas = clonePtr(o.MinReplicas)
		o.MaxReplicas = clonePtr(o.MaxReplicas)
		o.Env = copyEnv(o.Env)
		o.Resources = o.Resources.deepCopy()
		o.Suspend = clonePtr(o.Suspend)
		o.NodeSelector = maps.Clone(o.NodeSelector)
		o.Tolerations = copyTolerations(o.Tolerations)
		out[i] = o
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// copyEnv copies the variables and where their values come from.
func copyEnv(env []EnvVar) []EnvVar {
	out := slices.Clone(env)
	for i, e := range out {
		if f := e.ValueFrom; f != nil {
			out[i].ValueFrom = &EnvSource{SecretKeyRef: clonePtr(f.SecretKeyRef), ConfigMapKeyRef: clonePtr(f.ConfigMapKeyRef)}
		}
	}
	return out
}

func copyEnvFrom(in []EnvFromSource) []EnvFromSource {
	out := slices.Clone(in)
	for i, e := range out {
		out[i].SecretRef, out[i].ConfigMapRef = clonePtr(e.SecretRef), clonePtr(e.ConfigMapRef)
	}
	return out
}

func copyVolumes(in []Volume) []Volume {
	out := slices.Clone(in)
	for i, v := range out {
		out[i].Secret, out[i].ConfigMap = clonePtr(v.Secret), clonePtr(v.ConfigMap)
		out[i].Items = slices.Clone(v.Items)
	}
	return out
}

func copyTolerations(in []Toleration) []Toleration {
	out := slices.Clone(in)
	for i, t := range out {
		out[i].TolerationSeconds = clonePtr(t.TolerationSeconds)
	}
	return out
}

func copySpread(in []corev1.TopologySpreadConstraint) []corev1.TopologySpreadConstraint {
	if in == nil {
		return nil
	}
	out := make([]corev1.TopologySpreadConstraint, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
