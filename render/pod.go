package render

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
)

// userVolumeMode lets the worker's user and group read a mounted Secret or
// ConfigMap and nobody else.
const userVolumeMode int32 = 0o440

// withNamespaceObjects adds what the component reads from its namespace:
// envFrom sources, Secret and ConfigMap volumes (read-only) and the
// registry credentials. Referring to the cluster's shared NATS credentials
// is refused: they would give the worker every worker's identity.
func withNamespaceObjects(ps *corev1.PodSpec, s api.Spec, cl Cluster) error {
	if shared := cl.NATS.CredentialsSecret; shared != "" && shared != PerComponent {
		if path := readsSecret(s, shared); path != "" {
			return fmt.Errorf("%s: Secret %s holds the NATS credentials this cluster gives every worker; a component may not read it", path, shared)
		}
	}
	ctr := &ps.Containers[0]
	for i, f := range s.EnvFrom {
		if (f.SecretRef == nil) == (f.ConfigMapRef == nil) {
			return fmt.Errorf("spec.envFrom[%d]: set one of secretRef or configMapRef", i)
		}
		src := corev1.EnvFromSource{Prefix: f.Prefix}
		if r := f.SecretRef; r != nil {
			src.SecretRef = &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Optional: optional(r.Optional)}
		} else if r := f.ConfigMapRef; r != nil {
			src.ConfigMapRef = &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Optional: optional(r.Optional)}
		}
		ctr.EnvFrom = append(ctr.EnvFrom, src)
	}
	for i, v := range s.Volumes {
		if (v.Secret == nil) == (v.ConfigMap == nil) {
			return fmt.Errorf("spec.volumes[%d]: set one of secret or configMap", i)
		}
		ps.Volumes = append(ps.Volumes, corev1.Volume{Name: v.Name, VolumeSource: volumeSource(v)})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: v.MountPath, ReadOnly: true})
	}
	for _, r := range s.ImagePullSecrets {
		ps.ImagePullSecrets = append(ps.ImagePullSecrets, corev1.LocalObjectReference{Name: r.Name})
	}
	return nil
}

// readsSecret returns the field path of the first reference s makes to
// Secret name, or "".
func readsSecret(s api.Spec, name string) string {
	for i, e := range s.Env {
		if f := e.ValueFrom; f != nil && f.SecretKeyRef != nil && f.SecretKeyRef.Name == name {
			return fmt.Sprintf("spec.env[%d].valueFrom.secretKeyRef.name", i)
		}
	}
	for i, f := range s.EnvFrom {
		if f.SecretRef != nil && f.SecretRef.Name == name {
			return fmt.Sprintf("spec.envFrom[%d].secretRef.name", i)
		}
	}
	for i, v := range s.Volumes {
		if v.Secret != nil && v.Secret.Name == name {
			return fmt.Sprintf("spec.volumes[%d].secret.name", i)
		}
	}
	return ""
}

func volumeSource(v api.Volume) corev1.VolumeSource {
	var items []corev1.KeyToPath
	for _, it := range v.Items {
		items = append(items, corev1.KeyToPath{Key: it.Key, Path: it.Path})
	}
	if r := v.Secret; r != nil {
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: r.Name, Items: items, DefaultMode: ptr.To(userVolumeMode), Optional: optional(r.Optional)}}
	}
	r := v.ConfigMap
	return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: r.Name},
		Items:                items, DefaultMode: ptr.To(userVolumeMode), Optional: optional(r.Optional)}}
}

// withScheduling places and ranks the pods (a spread constraint without a
// selector spreads the component's own: podSelector) and bounds their
// termination.
func withScheduling(ps *corev1.PodSpec, s api.Spec, podSelector map[string]string) {
	ps.NodeSelector = s.NodeSelector
	for _, t := range s.Tolerations {
		ps.Tolerations = append(ps.Tolerations, corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
			Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds,
		})
	}
	ps.PriorityClassName = s.PriorityClassName
	ps.TerminationGracePeriodSeconds = s.TerminationGracePeriodSeconds
	ps.ServiceAccountName = s.ServiceAccountName
	ps.AutomountServiceAccountToken = ptr.To(s.AutomountServiceAccountToken)
	ps.Affinity = s.Affinity.DeepCopy()
	for _, c := range s.TopologySpreadConstraints {
		c = *c.DeepCopy()
		if c.LabelSelector == nil {
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: podSelector}
		}
		ps.TopologySpreadConstraints = append(ps.TopologySpreadConstraints, c)
	}
}

// envValueFrom is a variable's Kubernetes source, or nil when f names
// none.
func envValueFrom(f *api.EnvSource) *corev1.EnvVarSource {
	if f.SecretKeyRef == nil && f.ConfigMapKeyRef == nil {
		return nil
	}
	if r := f.SecretKeyRef; r != nil {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Key: r.Key, Optional: optional(r.Optional)}}
	}
	r := f.ConfigMapKeyRef
	return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Key: r.Key, Optional: optional(r.Optional)}}
}

// optional is nil for false, so that an unset field renders as before.
func optional(b bool) *bool {
	if !b {
		return nil
	}
	return ptr.To(true)
}
