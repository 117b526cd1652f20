package render_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/workerenv"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// TestDeploymentIsHardened pins every field the restricted Pod Security
// Standard and the design ask of a worker pod, for every case.
func TestDeploymentIsHardened(t *testing.T) {
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			pod := mustRender(t, tc).Deployment.Spec.Template.Spec
			wantPod := &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](65532),
				RunAsGroup:     ptr.To[int64](65532),
				FSGroup:        ptr.To[int64](65532),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			}
			if diff := cmp.Diff(wantPod, pod.SecurityContext); diff != "" {
				t.Errorf("pod securityContext (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(ptr.To(false), pod.AutomountServiceAccountToken); diff != "" {
				t.Errorf("automountServiceAccountToken (-want +got):\n%s", diff)
			}
			if len(pod.Containers) != 1 {
				t.Fatalf("containers = %d, want 1", len(pod.Containers))
			}
			wantCtr := &corev1.SecurityContext{
				RunAsNonRoot:             ptr.To(true),
				AllowPrivilegeEscalation: ptr.To(false),
				ReadOnlyRootFilesystem:   ptr.To(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}
			if diff := cmp.Diff(wantCtr, pod.Containers[0].SecurityContext); diff != "" {
				t.Errorf("container securityContext (-want +got):\n%s", diff)
			}
			assertTmpIsWritable(t, pod)
		})
	}
}

// assertTmpIsWritable checks that /tmp is an emptyDir, the one writable
// place under a read-only root filesystem.
func assertTmpIsWritable(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	var mount *corev1.VolumeMount
	for i, m := range pod.Containers[0].VolumeMounts {
		if m.MountPath == "/tmp" {
			mount = &pod.Containers[0].VolumeMounts[i]
		}
	}
	if mount == nil || mount.ReadOnly {
		t.Fatalf("/tmp mount = %+v, want a writable mount", mount)
	}
	for _, v := range pod.Volumes {
		if v.Name == mount.Name && v.EmptyDir != nil {
			return
		}
	}
	t.Errorf("/tmp volume %q is not an emptyDir: %+v", mount.Name, pod.Volumes)
}

// TestCredentialsAreMountedReadOnly checks what a worker sees when the
// cluster has a NATS credentials Secret, and that nothing is mounted or
// annotated when it has none.
func TestCredentialsAreMountedReadOnly(t *testing.T) {
	c := defaults.Apply(component("extractor", api.Spec{}))
	cl := withCredentials()
	objs, err := render.Render(c, 1, cl)
	if err != nil {
		t.Fatal(err)
	}
	d := objs.Deployment
	if got := d.Annotations[render.AnnotationReloadSecret]; got != "nats-client" {
		t.Errorf("reload annotation = %q, want nats-client", got)
	}
	pod := d.Spec.Template.Spec
	wantMount := corev1.VolumeMount{Name: "nats-creds", MountPath: render.CredentialsDir, ReadOnly: true}
	if diff := cmp.Diff(wantMount, pod.Containers[0].VolumeMounts[1]); diff != "" {
		t.Errorf("credentials mount (-want +got):\n%s", diff)
	}
	wantVol := corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "nats-client", DefaultMode: ptr.To[int32](0o440)}}
	if diff := cmp.Diff(wantVol, pod.Volumes[1].VolumeSource); diff != "" {
		t.Errorf("credentials volume (-want +got):\n%s", diff)
	}
	if got := envValue(pod.Containers[0].Env, workerenv.NATSCreds); got != "/etc/tinyctl/nats/nats.creds" {
		t.Errorf("%s = %q, want the mounted file", workerenv.NATSCreds, got)
	}

	objs, err = render.Render(c, 1, testCluster())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := objs.Deployment.Annotations[render.AnnotationReloadSecret]; ok {
		t.Error("reload annotation set without a credentials Secret")
	}
	if n := len(objs.Deployment.Spec.Template.Spec.Volumes); n != 1 {
		t.Errorf("volumes = %d without a credentials Secret, want only /tmp", n)
	}

	// Minted credentials are rewritten every half TTL and re-read by the
	// worker on reconnect: no rollout for them.
	cl.NATS.CredentialsSecret = render.PerComponent
	if objs, err = render.Render(c, 1, cl); err != nil {
		t.Fatal(err)
	}
	if got, ok := objs.Deployment.Annotations[render.AnnotationReloadSecret]; ok {
		t.Errorf("reload annotation %q on minted credentials: Reloader would restart every worker every half TTL", got)
	}
	if got := objs.Deployment.Spec.Template.Spec.Volumes[1].Secret.SecretName; got != "extractor-nats" {
		t.Errorf("minted credentials volume from %q, want extractor-nats", got)
	}
}

// TestWorkerEnvironment checks the variables a worker reads to find its
// broker, stream and consumer, ahead of the user's own.
func TestWorkerEnvironment(t *testing.T) {
	c := defaults.Apply(component("extractor", api.Spec{Env: []api.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}}))
	objs, err := render.Render(c, 1, testCluster())
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.EnvVar{
		{Name: workerenv.NATSURL, Value: render.DefaultNATSURL},
		{Name: workerenv.Stream, Value: "tinyctl_workers_extractor"},
		{Name: workerenv.Consumer, Value: "tinyctl_workers_extractor_worker"},
		{Name: workerenv.OTLPEndpoint, Value: render.DefaultCollectorEndpoint},
		{Name: workerenv.ServiceName, Value: "extractor"},
		{Name: "LOG_LEVEL", Value: "debug"},
	}
	if diff := cmp.Diff(want, objs.Deployment.Spec.Template.Spec.Containers[0].Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

// TestMintedCredentialsAreTheComponentsOwn checks that with per-component
// credentials each Deployment mounts its own Secret and is told its
// credentials, inbox prefix and TLS files, and nothing of the collector
// when there is none.
func TestMintedCredentialsAreTheComponentsOwn(t *testing.T) {
	cl := testCluster()
	cl.NATS.CredentialsSecret = render.PerComponent
	cl.NATS.WorkerTLS.CA = true
	cl.Collector.Endpoint = "-"
	for _, name := range []string{"alpha", "beta"} {
		objs, err := render.Render(defaults.Apply(component(name, api.Spec{})), 1, cl)
		if err != nil {
			t.Fatal(err)
		}
		pod := objs.Deployment.Spec.Template.Spec
		vols := pod.Volumes
		if len(vols) != 2 || vols[1].Secret == nil || vols[1].Secret.SecretName != name+"-nats" {
			t.Fatalf("%s volumes %+v, want its own Secret %s-nats", name, vols, name)
		}
		want := []corev1.EnvVar{
			{Name: workerenv.NATSURL, Value: render.DefaultNATSURL},
			{Name: workerenv.Stream, Value: "tinyctl_workers_" + name},
			{Name: workerenv.Consumer, Value: "tinyctl_workers_" + name + "_worker"},
			{Name: workerenv.NATSCreds, Value: render.CredentialsDir + "/nats.creds"},
			{Name: workerenv.InboxPrefix, Value: "_INBOX_tinyctl_workers_" + name + "_worker"},
			{Name: workerenv.NATSCA, Value: render.CredentialsDir + "/ca.crt"},
		}
		if diff := cmp.Diff(want, pod.Containers[0].Env); diff != "" {
			t.Errorf("%s env (-want +got):\n%s", name, diff)
		}
	}
}

// TestReplicasOwnership checks that a KEDA-scaled Deployment leaves
// spec.replicas unset (so applies never fight KEDA) and a fixed one sets it.
func TestReplicasOwnership(t *testing.T) {
	tests := map[string]struct {
		spec api.Spec
		want *int32
	}{
		"scaled by KEDA":    {api.Spec{Scaling: &api.Scaling{MaxReplicas: 5}}, nil},
		"fixed replicas":    {api.Spec{Replicas: ptr.To[int32](4)}, ptr.To[int32](4)},
		"default replicas":  {api.Spec{}, ptr.To[int32](1)},
		"fixed zero (idle)": {api.Spec{Replicas: ptr.To[int32](0)}, ptr.To[int32](0)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			objs, err := render.Render(defaults.Apply(component("w", tt.spec)), 1, testCluster())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, objs.Deployment.Spec.Replicas); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
			if (objs.ScaledObject != nil) != (tt.spec.Scaling != nil) {
				t.Errorf("ScaledObject present = %t, want %t", objs.ScaledObject != nil, tt.spec.Scaling != nil)
			}
		})
	}
}

// TestRenderRefusesWhatTheServersWould checks that Render reports, with the
// field, a component the API server or nats-server would refuse, instead of
// producing objects that fail on apply.
func TestRenderRefusesWhatTheServersWould(t *testing.T) {
	tests := map[string]struct {
		spec  api.Spec
		field string
	}{
		"bad quantity":            {api.Spec{Resources: &api.Resources{Limits: map[string]string{"memory": "lots"}}}, "spec.resources.limits.memory"},
		"reserved env":            {api.Spec{Env: []api.EnvVar{{Name: workerenv.NATSURL, Value: "x"}}}, "spec.env[0]"},
		"duplicate env":           {api.Spec{Env: []api.EnvVar{{Name: "A"}, {Name: "A"}}}, "spec.env[1]"},
		"bad duration":            {api.Spec{Jobs: api.Jobs{Consumer: api.ConsumerSpec{AckWait: "soon"}}}, "spec.jobs.consumer.ackWait"},
		"window beyond max age":   {api.Spec{Jobs: api.Jobs{Stream: api.StreamSpec{MaxAge: "1m", DuplicateWindow: "2m"}}}, "spec.jobs.stream.duplicateWindow"},
		"backoff beyond delivery": {api.Spec{Jobs: api.Jobs{Consumer: api.ConsumerSpec{MaxDeliver: 1, Backoff: []api.Duration{"1s", "2s"}}}}, "spec.jobs.consumer.backoff"},
		"too many replicas":       {api.Spec{Jobs: api.Jobs{Stream: api.StreamSpec{Replicas: 7}}}, "spec.jobs.stream.replicas"},
		"unknown egress":          {api.Spec{Egress: api.Egress{Mode: "everywhere"}}, "spec.egress"},
		"env from nothing":        {api.Spec{Env: []api.EnvVar{{Name: "A", ValueFrom: &api.EnvSource{}}}}, "spec.env[0].valueFrom"},
		"envFrom of nothing":      {api.Spec{EnvFrom: []api.EnvFromSource{{Prefix: "A_"}}}, "spec.envFrom[0]"},
		"volume of nothing":       {api.Spec{Volumes: []api.Volume{{Name: "v", MountPath: "/v"}}}, "spec.volumes[0]"},
		"allow without peer":      {api.Spec{Egress: api.Egress{Mode: api.EgressAllow, Allow: []api.EgressRule{{Ports: []api.Port{{Port: 80}}}}}}, "spec.egress.allow[0]"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := render.Render(defaults.Apply(component("w", tt.spec)), 1, testCluster())
			if !errors.Is(err, api.ErrInvalid) {
				t.Fatalf("Render error = %v, want api.ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Render error = %v, want it to name %s", err, tt.field)
			}
		})
	}
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// TestAComponentMayNotReadTheSharedCredentials renders, for a cluster that
// mounts one NATS credentials Secret into every worker, components that
// read that Secret themselves: each is refused, naming the field.
func TestAComponentMayNotReadTheSharedCredentials(t *testing.T) {
	shared := withCredentials().NATS.CredentialsSecret
	ref := &api.ObjectRef{Name: shared}
	for field, spec := range map[string]api.Spec{
		"spec.env[0].valueFrom.secretKeyRef.name": {Env: []api.EnvVar{{Name: "CREDS", ValueFrom: &api.EnvSource{SecretKeyRef: &api.KeyRef{Name: shared, Key: "nats.creds"}}}}},
		"spec.envFrom[0].secretRef.name":          {EnvFrom: []api.EnvFromSource{{SecretRef: ref}}},
		"spec.volumes[0].secret.name":             {Volumes: []api.Volume{{Name: "n", MountPath: "/etc/n", Secret: ref}}},
	} {
		_, err := render.Render(defaults.Apply(component("w", spec)), 1, withCredentials())
		if !errors.Is(err, api.ErrInvalid) || !strings.Contains(err.Error(), field) {
			t.Errorf("Render error = %v, want api.ErrInvalid naming %s", err, field)
		}
	}
}
