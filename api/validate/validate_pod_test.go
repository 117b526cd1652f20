package validate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/podlayout"
)

// podComponent is validComponent with every pod field set, validly.
func podComponent() api.Component {
	c := validComponent()
	s := &c.Spec
	s.Env = append(s.Env,
		api.EnvVar{Name: "DB_PASSWORD", ValueFrom: &api.EnvSource{SecretKeyRef: &api.KeyRef{Name: "db", Key: "password"}}},
		api.EnvVar{Name: "REGION", ValueFrom: &api.EnvSource{ConfigMapKeyRef: &api.KeyRef{Name: "site", Key: "region", Optional: true}}})
	s.EnvFrom = []api.EnvFromSource{{Prefix: "APP_", ConfigMapRef: &api.ObjectRef{Name: "settings"}}, {SecretRef: &api.ObjectRef{Name: "api-keys"}}}
	s.Volumes = []api.Volume{
		{Name: "tls", MountPath: "/etc/db-tls", Secret: &api.ObjectRef{Name: "db-tls"}, Items: []api.KeyToPath{{Key: "ca.crt", Path: "ca.pem"}}},
		{Name: "rules", MountPath: "/etc/rules", ConfigMap: &api.ObjectRef{Name: "rules"}},
	}
	s.ImagePullSecrets = []api.LocalObjectReference{{Name: "registry"}}
	s.NodeSelector = map[string]string{"disktype": "ssd"}
	s.Tolerations = []api.Toleration{{Key: "dedicated", Operator: "Equal", Value: "workers", Effect: "NoSchedule"},
		{Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To(int64(300))}}
	s.PriorityClassName = "batch-low"
	s.TerminationGracePeriodSeconds = ptr.To(int64(120))
	s.Affinity = &corev1.Affinity{
		NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}}}}}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}}},
	}
	s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}
	s.Probes = &api.Probes{
		Liveness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/live", Port: intstr.FromInt32(8080),
			HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "kubelet"}}}}, PeriodSeconds: 20, FailureThreshold: 3},
		Readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, SuccessThreshold: 2},
	}
	return c
}

func TestValidateAcceptsEveryPodField(t *testing.T) {
	if err := AsError(Component(podComponent())); err != nil {
		t.Fatal(err)
	}
}

func TestValidateReportsPodFieldPaths(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *api.Spec)
		want   []string
	}{
		{"value and valueFrom", func(s *api.Spec) { s.Env[2].Value = "hunter2" }, want(problem{forbidden, "spec.env[2].value"})},
		{"valueFrom naming nothing", func(s *api.Spec) { s.Env[2].ValueFrom = &api.EnvSource{} }, want(problem{required, "spec.env[2].valueFrom"})},
		{"valueFrom naming both", func(s *api.Spec) { s.Env[2].ValueFrom.ConfigMapKeyRef = &api.KeyRef{Name: "a", Key: "b"} },
			want(problem{invalid, "spec.env[2].valueFrom"})},
		{"secretKeyRef without key", func(s *api.Spec) { s.Env[2].ValueFrom.SecretKeyRef.Key = "" }, want(problem{required, "spec.env[2].valueFrom.secretKeyRef.key"})},
		{"key with a slash", func(s *api.Spec) { s.Env[3].ValueFrom.ConfigMapKeyRef.Key = "a/b" }, want(problem{invalid, "spec.env[3].valueFrom.configMapKeyRef.key"})},
		{"secret name not a DNS name", func(s *api.Spec) { s.Env[2].ValueFrom.SecretKeyRef.Name = "DB" }, want(problem{invalid, "spec.env[2].valueFrom.secretKeyRef.name"})},
		{"another component's minted credentials", func(s *api.Spec) { s.Env[2].ValueFrom.SecretKeyRef.Name = "billing-nats" },
			want(problem{forbidden, "spec.env[2].valueFrom.secretKeyRef.name"})},
		{"envFrom naming nothing", func(s *api.Spec) { s.EnvFrom[1].SecretRef = nil }, want(problem{required, "spec.envFrom[1]"})},
		{"envFrom bad prefix", func(s *api.Spec) { s.EnvFrom[0].Prefix = "1-" }, want(problem{invalid, "spec.envFrom[0].prefix"})},
		{"envFrom minted credentials", func(s *api.Spec) { s.EnvFrom[1].SecretRef.Name = "pdf-nats" }, want(problem{forbidden, "spec.envFrom[1].secretRef.name"})},
		{"volume named like tinyctl's", func(s *api.Spec) { s.Volumes[0].Name = podlayout.CredentialsVolume }, want(problem{forbidden, "spec.volumes[0].name"})},
		{"duplicate volume", func(s *api.Spec) { s.Volumes[1].Name = "tls" }, want(problem{duplicate, "spec.volumes[1].name"})},
		{"relative mount path", func(s *api.Spec) { s.Volumes[0].MountPath = "etc/tls" }, want(problem{invalid, "spec.volumes[0].mountPath"})},
		{"mount over /tmp", func(s *api.Spec) { s.Volumes[0].MountPath = "/tmp/tls" }, want(problem{forbidden, "spec.volumes[0].mountPath"})},
		{"mount above the credentials", func(s *api.Spec) { s.Volumes[0].MountPath = "/etc/tinyctl" }, want(problem{forbidden, "spec.volumes[0].mountPath"})},
		{"mount at the root", func(s *api.Spec) { s.Volumes[0].MountPath = "/" }, want(problem{forbidden, "spec.volumes[0].mountPath"})},
		{"same mount path twice", func(s *api.Spec) { s.Volumes[1].MountPath = "/etc/db-tls" }, want(problem{duplicate, "spec.volumes[1].mountPath"})},
		{"volume of nothing", func(s *api.Spec) { s.Volumes[1].ConfigMap = nil }, want(problem{required, "spec.volumes[1]"})},
		{"item escaping the mount", func(s *api.Spec) { s.Volumes[0].Items[0].Path = "../passwd" }, want(problem{invalid, "spec.volumes[0].items[0].path"})},
		{"item without key", func(s *api.Spec) { s.Volumes[0].Items[0].Key = "" }, want(problem{required, "spec.volumes[0].items[0].key"})},
		{"pull secret without name", func(s *api.Spec) { s.ImagePullSecrets[0].Name = "" }, want(problem{required, "spec.imagePullSecrets[0].name"})},
		{"bad node selector", func(s *api.Spec) { s.NodeSelector["disk type"] = "ssd" }, want(problem{invalid, "spec.nodeSelector"})},
		{"unknown operator", func(s *api.Spec) { s.Tolerations[0].Operator = "In" }, want(problem{notSupported, "spec.tolerations[0].operator"})},
		{"Exists with a value", func(s *api.Spec) { s.Tolerations[0].Operator = "Exists" }, want(problem{invalid, "spec.tolerations[0].value"})},
		{"Equal without key", func(s *api.Spec) { s.Tolerations[1].Operator = "" }, want(problem{invalid, "spec.tolerations[1].operator"})},
		{"unknown effect", func(s *api.Spec) { s.Tolerations[0].Effect = "NoRun" }, want(problem{notSupported, "spec.tolerations[0].effect"})},
		{"tolerationSeconds without NoExecute", func(s *api.Spec) { s.Tolerations[0].TolerationSeconds = ptr.To(int64(1)) },
			want(problem{invalid, "spec.tolerations[0].tolerationSeconds"})},
		{"system priority class", func(s *api.Spec) { s.PriorityClassName = "system-node-critical" }, want(problem{forbidden, "spec.priorityClassName"})},
		{"grace of zero", func(s *api.Spec) { s.TerminationGracePeriodSeconds = ptr.To(int64(0)) }, want(problem{invalid, "spec.terminationGracePeriodSeconds"})},
		{"service account not a DNS name", func(s *api.Spec) { s.ServiceAccountName = "Indexer" }, want(problem{invalid, "spec.serviceAccountName"})},
		{"node affinity: unknown operator, and In without values", func(s *api.Spec) {
			req := s.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions
			req[0].Operator = "Like"
			s.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(
				s.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
				corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn}}})
		}, want(problem{notSupported, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"},
			problem{required, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1].matchExpressions[0].values"})},
		{"anti-affinity weight and topology key", func(s *api.Spec) {
			w := &s.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0]
			w.Weight, w.PodAffinityTerm.TopologyKey = 101, ""
		}, want(problem{invalid, "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"},
			problem{required, "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey"})},
		{"spread: no skew, no policy, twice", func(s *api.Spec) {
			s.TopologySpreadConstraints[0].MaxSkew = 0
			s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, s.TopologySpreadConstraints[0])
			s.TopologySpreadConstraints[1].MaxSkew, s.TopologySpreadConstraints[1].WhenUnsatisfiable = 1, ""
			s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, s.TopologySpreadConstraints[1])
			s.TopologySpreadConstraints[2].WhenUnsatisfiable = corev1.DoNotSchedule
			s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, s.TopologySpreadConstraints[2])
		}, want(problem{invalid, "spec.topologySpreadConstraints[0].maxSkew"},
			problem{notSupported, "spec.topologySpreadConstraints[1].whenUnsatisfiable"},
			problem{duplicate, "spec.topologySpreadConstraints[3]"})},
		{"worker probes and the user's", func(s *api.Spec) { s.Probes.Worker = true }, want(problem{invalid, "spec.probes.worker"})},
		{"probe of no handler, and of two", func(s *api.Spec) {
			s.Probes.Liveness.HTTPGet = nil
			s.Probes.Readiness.Exec = &corev1.ExecAction{}
		}, want(problem{required, "spec.probes.liveness"}, problem{required, "spec.probes.readiness.exec.command"}, problem{invalid, "spec.probes.readiness"})},
		{"http probe: named port, relative path, other host, bad scheme and header", func(s *api.Spec) {
			g := s.Probes.Liveness.HTTPGet
			g.Port, g.Path, g.Host, g.Scheme, g.HTTPHeaders[0].Name = intstr.FromString("http"), "live", "10.0.0.1", "FTP", "X Probe"
		}, want(problem{invalid, "spec.probes.liveness.httpGet.port"}, problem{invalid, "spec.probes.liveness.httpGet.path"},
			problem{notSupported, "spec.probes.liveness.httpGet.scheme"}, problem{forbidden, "spec.probes.liveness.httpGet.host"},
			problem{invalid, "spec.probes.liveness.httpGet.httpHeaders[0].name"})},
		{"liveness succeeding twice, readiness with a grace, ports out of range", func(s *api.Spec) {
			s.Probes.Liveness.SuccessThreshold, s.Probes.Liveness.PeriodSeconds = 2, -1
			s.Probes.Readiness.TCPSocket.Port = intstr.FromInt32(70000)
			s.Probes.Readiness.TerminationGracePeriodSeconds = ptr.To(int64(10))
		}, want(problem{invalid, "spec.probes.liveness.periodSeconds"}, problem{invalid, "spec.probes.liveness.successThreshold"},
			problem{invalid, "spec.probes.readiness.tcpSocket.port"}, problem{forbidden, "spec.probes.readiness.terminationGracePeriodSeconds"})},
		{"metrics on a privileged port", func(s *api.Spec) { s.MetricsPort = 80 }, want(problem{invalid, "spec.metricsPort"})},
		{"metrics on the worker library's health port", func(s *api.Spec) {
			s.Probes = &api.Probes{Worker: true}
			s.MetricsPort = 8081
		}, want(problem{invalid, "spec.metricsPort"})},
		{"env override from minted credentials", func(s *api.Spec) {
			s.Overrides = []api.Override{{Clusters: []string{"east"}, Env: []api.EnvVar{{Name: "TOKEN",
				ValueFrom: &api.EnvSource{SecretKeyRef: &api.KeyRef{Name: "x-nats", Key: "k"}}}}}}
		}, want(problem{forbidden, "spec.overrides[0].env[0].valueFrom.secretKeyRef.name"})},
		{"override with a bad toleration and a system priority class", func(s *api.Spec) {
			s.Overrides = []api.Override{{Clusters: []string{"east"}, NodeSelector: map[string]string{"pool": "gpu"},
				Tolerations: []api.Toleration{{Key: "gpu", Operator: "Exists", Value: "yes"}}, PriorityClassName: "system-cluster-critical"}}
		}, want(problem{forbidden, "spec.overrides[0].priorityClassName"}, problem{invalid, "spec.overrides[0].tolerations[0].value"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := podComponent()
			tt.mutate(&c.Spec)
			if diff := cmp.Diff(tt.want, problems(Component(c))); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerror: %v", diff, AsError(Component(c)))
			}
		})
	}
}

// TestBadPodFieldsComeInOneError decodes a manifest as apply reads it:
// every wrong pod field is named in one message.
func TestBadPodFieldsComeInOneError(t *testing.T) {
	c, err := decode.Component([]byte(`
apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: extractor, namespace: docs}
spec:
  image: registry.example.com/acme/extractor:1.0
  jobs: {subjects: [docs.extract]}
  env:
  - name: DB_PASSWORD
    valueFrom: {secretKeyRef: {name: db}}
  volumes:
  - {name: tls, mountPath: /tmp, secret: {name: db-tls}}
  imagePullSecrets: [{name: ""}]
  terminationGracePeriodSeconds: 7200
`))
	if err != nil {
		t.Fatal(err)
	}
	err = AsError(Component(c))
	if err == nil {
		t.Fatal("a component with four bad pod fields was accepted")
	}
	c.Spec.Env[0].Value = "hunter2"
	if msg := AsError(Component(c)).Error(); !strings.Contains(msg, "spec.env[0].value") || strings.Contains(msg, "hunter2") {
		t.Errorf("a value set beside valueFrom: the error must name the field and not echo the value:\n%s", msg)
	}
	for _, path := range []string{"spec.env[0].valueFrom.secretKeyRef.key", "spec.volumes[0].mountPath",
		"spec.imagePullSecrets[0].name", "spec.terminationGracePeriodSeconds"} {
		if !strings.Contains(err.Error(), path) {
			t.Errorf("the error does not name %s:\n%v", path, err)
		}
	}
}
