package render

import (
	"fmt"
	"path"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/podlayout"
	"github.com/tinyctl/tinyctl/api/workerenv"
)

// Names inside the worker pod.
const (
	// ContainerName is the worker container's name.
	ContainerName = "worker"
	tmpVolume     = podlayout.TmpVolume
	credsVolume   = podlayout.CredentialsVolume
	// credsMode lets the owner and the fsGroup read the credentials file.
	credsMode int32 = 0o440
	// MinReadySeconds is how long a worker pod must stay ready before it
	// counts as available: a worker that exits at start is never
	// available, so the component is not reported Ready (and apply
	// --wait does not return) in the moment between its start and its
	// crash.
	MinReadySeconds int32 = 10
)

func deployment(c api.Component, cl Cluster, m meta) (*appsv1.Deployment, error) {
	ctr, err := container(c, cl)
	if err != nil {
		return nil, err
	}
	md := c.Metadata
	ps := podSpec(ctr, cl.RunAsUser, credentialsSecret(c, cl))
	if err := withNamespaceObjects(&ps, c.Spec, cl); err != nil {
		return nil, err
	}
	withScheduling(&ps, c.Spec, selectorLabels(md.Namespace, md.Name))
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: m.objectMeta(reloadAnnotation(c, cl)),
		Spec: appsv1.DeploymentSpec{
			Selector:        &metav1.LabelSelector{MatchLabels: selectorLabels(md.Namespace, md.Name)},
			MinReadySeconds: MinReadySeconds,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: objectLabels(md.Namespace, md.Name, md.Labels)},
				Spec:       ps,
			},
		},
	}
	if c.Spec.Scaling == nil {
		d.Spec.Replicas = ptr.To(replicas(c.Spec.Replicas))
	}
	return d, stamp(d, d, m)
}

// replicas is the fixed worker count: the spec's, or defaults.Replicas
// when an undefaulted component left it unset.
func replicas(r *int32) int32 {
	if r == nil {
		return defaults.Replicas
	}
	return *r
}

// reloadAnnotation asks Reloader to roll the workers when a shared
// credentials Secret changes. Minted credentials (PerComponent) get none:
// the controller rewrites them every half TTL, and workers re-read them on
// reconnect, so a rollout would only restart every worker every half hour.
func reloadAnnotation(c api.Component, cl Cluster) map[string]string {
	s := credentialsSecret(c, cl)
	if s == "" || cl.NATS.CredentialsSecret == PerComponent {
		return nil
	}
	return map[string]string{AnnotationReloadSecret: s}
}

// credentialsSecret is the Secret mounted into c's workers, or "".
func credentialsSecret(c api.Component, cl Cluster) string {
	if cl.NATS.CredentialsSecret == PerComponent {
		return CredentialsSecretName(c.Metadata.Name)
	}
	return cl.NATS.CredentialsSecret
}

// podSpec is the restricted-Pod-Security pod around the worker container,
// with the credentials Secret creds mounted when it is not "".
func podSpec(ctr corev1.Container, uid int64, creds string) corev1.PodSpec {
	ps := corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To(uid),
			RunAsGroup:     ptr.To(uid),
			FSGroup:        ptr.To(uid),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{ctr},
		Volumes: []corev1.Volume{{
			Name:         tmpVolume,
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
		}},
	}
	if s := creds; s != "" {
		ps.Volumes = append(ps.Volumes, corev1.Volume{
			Name: credsVolume,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: s, DefaultMode: ptr.To(credsMode),
			}},
		})
	}
	return ps
}

func container(c api.Component, cl Cluster) (corev1.Container, error) {
	env, err := containerEnv(c, cl)
	if err != nil {
		return corev1.Container{}, err
	}
	res, err := resources(c.Spec.Resources)
	if err != nil {
		return corev1.Container{}, err
	}
	ctr := corev1.Container{
		Name:      ContainerName,
		Image:     c.Spec.Image,
		Command:   c.Spec.Command,
		Args:      c.Spec.Args,
		Env:       env,
		Resources: res,
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: tmpVolume, MountPath: podlayout.TmpMountPath}},
	}
	if credentialsSecret(c, cl) != "" {
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{
			Name: credsVolume, MountPath: CredentialsDir, ReadOnly: true,
		})
	}
	withProbes(&ctr, c.Spec.Probes)
	if p := c.Spec.MetricsPort; p != 0 {
		ctr.Ports = append(ctr.Ports, corev1.ContainerPort{Name: podlayout.MetricsPortName, ContainerPort: p, Protocol: corev1.ProtocolTCP})
	}
	return ctr, nil
}

// withProbes sets the container's probes: the worker library's (a named
// port, /healthz for liveness and /readyz for readiness) or the user's.
func withProbes(ctr *corev1.Container, p *api.Probes) {
	switch {
	case p == nil:
		return
	case !p.Worker:
		ctr.LivenessProbe, ctr.ReadinessProbe = p.Liveness.DeepCopy(), p.Readiness.DeepCopy()
		return
	}
	ctr.Ports = []corev1.ContainerPort{{Name: podlayout.HealthPortName, ContainerPort: podlayout.HealthPort, Protocol: corev1.ProtocolTCP}}
	get := func(path string) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString(podlayout.HealthPortName), Scheme: corev1.URISchemeHTTP}}
	}
	// Liveness fails only when the connection is closed for good; three
	// misses 10 seconds apart restart the container. Readiness follows
	// the connection every 5 seconds.
	ctr.LivenessProbe = &corev1.Probe{ProbeHandler: get("/healthz"), PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}
	ctr.ReadinessProbe = &corev1.Probe{ProbeHandler: get("/readyz"), PeriodSeconds: 5, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 2}
}

// containerEnv is tinyctl's variables followed by the user's. A user
// variable may not reuse a name: server-side apply refuses duplicate keys.
func containerEnv(c api.Component, cl Cluster) ([]corev1.EnvVar, error) {
	env := append(natsEnv(c, cl), telemetryEnv(c, cl)...)
	env = append(env, drainEnv(c.Spec.TerminationGracePeriodSeconds)...)
	if p := c.Spec.Probes; p != nil && p.Worker {
		env = append(env, corev1.EnvVar{Name: workerenv.HealthAddr, Value: fmt.Sprintf(":%d", podlayout.HealthPort)})
	}
	if p := c.Spec.MetricsPort; p != 0 {
		env = append(env, corev1.EnvVar{Name: workerenv.MetricsAddr, Value: fmt.Sprintf(":%d", p)})
	}
	seen := make(map[string]bool, len(env)+len(c.Spec.Env))
	for _, e := range env {
		seen[e.Name] = true
	}
	for i, e := range c.Spec.Env {
		if seen[e.Name] {
			return nil, fmt.Errorf("spec.env[%d]: name %q is set twice or reserved by tinyctl", i, e.Name)
		}
		seen[e.Name] = true
		v := corev1.EnvVar{Name: e.Name, Value: e.Value}
		if e.ValueFrom != nil {
			if v.ValueFrom = envValueFrom(e.ValueFrom); v.ValueFrom == nil {
				return nil, fmt.Errorf("spec.env[%d].valueFrom: set one of secretKeyRef or configMapKeyRef", i)
			}
			v.Value = ""
		}
		env = append(env, v)
	}
	return env, nil
}

// natsEnv tells the worker where NATS is, which consumer to bind and which
// credentials and TLS files to use.
func natsEnv(c api.Component, cl Cluster) []corev1.EnvVar {
	md := c.Metadata
	env := []corev1.EnvVar{
		{Name: workerenv.NATSURL, Value: cl.NATS.URL},
		{Name: workerenv.Stream, Value: StreamName(md.Namespace, md.Name)},
		{Name: workerenv.Consumer, Value: ConsumerName(md.Namespace, md.Name)},
	}
	if cl.NATS.JSAPIPrefix != "" {
		env = append(env, corev1.EnvVar{Name: workerenv.JSAPIPrefix, Value: cl.NATS.JSAPIPrefix})
	}
	if credentialsSecret(c, cl) == "" {
		return env
	}
	file := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, Value: path.Join(CredentialsDir, key)}
	}
	env = append(env, file(workerenv.NATSCreds, cl.NATS.CredentialsKey))
	if cl.NATS.CredentialsSecret == PerComponent {
		env = append(env, corev1.EnvVar{Name: workerenv.InboxPrefix, Value: InboxPrefix(md.Namespace, md.Name)})
	}
	if cl.NATS.WorkerTLS.CA {
		env = append(env, file(workerenv.NATSCA, TLSCAKey))
	}
	if cl.NATS.WorkerTLS.ClientCert {
		env = append(env, file(workerenv.NATSCert, TLSCertKey), file(workerenv.NATSKey, TLSKeyKey))
	}
	return env
}

// drainEnv gives the worker library all of the pod's termination grace
// period but its last 5 seconds (half of it when it is 10 seconds or less)
// to finish running jobs, leaving it time to settle them and exit.
func drainEnv(seconds *int64) []corev1.EnvVar {
	if seconds == nil {
		return nil
	}
	d := time.Duration(*seconds) * time.Second
	if d > 10*time.Second {
		d -= 5 * time.Second
	} else {
		d /= 2
	}
	return []corev1.EnvVar{{Name: workerenv.DrainGrace, Value: d.String()}}
}

// telemetryEnv tells the worker where the trace collector is and its name.
func telemetryEnv(c api.Component, cl Cluster) []corev1.EnvVar {
	if cl.Collector.Endpoint == "-" {
		return nil
	}
	return []corev1.EnvVar{
		{Name: workerenv.OTLPEndpoint, Value: cl.Collector.Endpoint},
		{Name: workerenv.ServiceName, Value: c.Metadata.Name},
	}
}

func resources(r *api.Resources) (corev1.ResourceRequirements, error) {
	if r == nil {
		return corev1.ResourceRequirements{}, nil
	}
	req, err := resourceList("spec.resources.requests", r.Requests)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	lim, err := resourceList("spec.resources.limits", r.Limits)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	return corev1.ResourceRequirements{Requests: req, Limits: lim}, nil
}

func resourceList(field string, in map[string]string) (corev1.ResourceList, error) {
	if len(in) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(in))
	for k := range in {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(corev1.ResourceList, len(in))
	for _, k := range names {
		q, err := resource.ParseQuantity(in[k])
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", field, k, err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}
