package render_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/render"
)

// renderCase is one component as a user would publish it, with the cluster
// it is rendered for. Every tier of tests (golden files, nats-server, the
// API server) runs every case.
type renderCase struct {
	name      string
	component api.Component
	cluster   render.Cluster
}

// testRevision is the spec-bucket revision every case is rendered at.
const testRevision = 7

func testCluster() render.Cluster {
	return render.Cluster{Name: "test"}
}

func withCredentials() render.Cluster {
	cl := testCluster()
	cl.NATS.CredentialsSecret = "nats-client"
	return cl
}

// withMintedCredentials is a cluster whose controller mints credentials per
// component, with a broker that speaks mutual TLS and no collector.
func withMintedCredentials() render.Cluster {
	cl := testCluster()
	cl.NATS.CredentialsSecret = render.PerComponent
	cl.NATS.WorkerTLS = render.WorkerTLS{CA: true, ClientCert: true}
	cl.Collector.Endpoint = "-"
	return cl
}

// networkCluster is a dual-stack cluster that tells render its pod and
// service ranges and runs NodeLocal DNSCache on its usual address.
func networkCluster() render.Cluster {
	cl := testCluster()
	cl.Network = render.Network{
		PodCIDRs:     []string{"10.244.0.0/16", "fd00:10:244::/56"},
		ServiceCIDRs: []string{"10.96.0.0/12", "fd00:10:96::/112"},
	}
	cl.DNS.NodeLocalIP = "169.254.20.10"
	return cl
}

// withoutCollector is a cluster whose workers export no telemetry.
func withoutCollector() render.Cluster {
	cl := networkCluster()
	cl.Collector.Endpoint = "-"
	return cl
}

func component(name string, spec api.Spec) api.Component {
	if spec.Image == "" {
		spec.Image = "registry.example.com/acme/" + name + ":1.0.0"
	}
	if spec.Jobs.Subjects == nil {
		spec.Jobs.Subjects = []string{"jobs." + name + ".>"}
	}
	return api.Component{
		APIVersion: api.APIVersion,
		Kind:       api.Kind,
		Metadata:   api.Metadata{Name: name, Namespace: "workers"},
		Spec:       spec,
	}
}

func renderCases() []renderCase {
	scaled := component("extractor", api.Spec{
		Args: []string{"--mode=pdf"},
		Env:  []api.EnvVar{{Name: "LOG_LEVEL", Value: "info"}},
		Resources: &api.Resources{
			Requests: map[string]string{"cpu": "100m", "memory": "128Mi"},
			Limits:   map[string]string{"memory": "256Mi"},
		},
		Jobs: api.Jobs{
			Subjects: []string{"jobs.extract.>"},
			Consumer: api.ConsumerSpec{Backoff: []api.Duration{"1s", "10s", "1m"}},
		},
		Scaling: &api.Scaling{MinReplicas: 0, MaxReplicas: 20},
	})
	scaled.Metadata.Labels = map[string]string{"team": "docs"}

	fixed := component("thumbnailer", api.Spec{
		Command:     []string{"/thumbnailer"},
		Replicas:    ptr.To[int32](3),
		Probes:      &api.Probes{Worker: true},
		MetricsPort: 9464,
		Jobs: api.Jobs{
			Subjects:   []string{"jobs.thumbs.small", "jobs.thumbs.large"},
			Stream:     api.StreamSpec{Storage: "memory", MaxAge: "1h", DuplicateWindow: "30s", MaxMsgs: 10000, MaxBytes: 1 << 22},
			Consumer:   api.ConsumerSpec{AckWait: "2m", MaxDeliver: 3, MaxAckPending: 50},
			DeadLetter: true,
		},
	})

	allow := component("crawler", api.Spec{Egress: api.Egress{Mode: api.EgressAllow, Allow: []api.EgressRule{
		{CIDR: "203.0.113.0/24", Except: []string{"203.0.113.128/25"}, Ports: []api.Port{{Port: 443}}},
		{Namespace: "storage", PodLabels: map[string]string{"app": "minio"}, Ports: []api.Port{{Port: 9000, Protocol: "TCP"}}},
		{Namespace: "monitoring"},
		{PodLabels: map[string]string{"app": "cache"}, Ports: []api.Port{{Port: 6379}, {Port: 6380, Protocol: "UDP"}}},
	}}})

	pod := component("ledger", api.Spec{
		Replicas: ptr.To[int32](2),
		Env: []api.EnvVar{{Name: "LOG_LEVEL", Value: "info"},
			{Name: "DB_PASSWORD", ValueFrom: &api.EnvSource{SecretKeyRef: &api.KeyRef{Name: "ledger-db", Key: "password"}}},
			{Name: "REGION", ValueFrom: &api.EnvSource{ConfigMapKeyRef: &api.KeyRef{Name: "site", Key: "region", Optional: true}}}},
		EnvFrom: []api.EnvFromSource{{Prefix: "APP_", ConfigMapRef: &api.ObjectRef{Name: "ledger-settings"}},
			{SecretRef: &api.ObjectRef{Name: "ledger-keys", Optional: true}}},
		Volumes: []api.Volume{
			{Name: "db-tls", MountPath: "/etc/db-tls", Secret: &api.ObjectRef{Name: "ledger-db-tls"}, Items: []api.KeyToPath{{Key: "ca.crt", Path: "ca.pem"}}},
			{Name: "rules", MountPath: "/etc/rules", ConfigMap: &api.ObjectRef{Name: "ledger-rules"}},
		},
		ImagePullSecrets:  []api.LocalObjectReference{{Name: "registry"}},
		NodeSelector:      map[string]string{"disktype": "ssd"},
		Tolerations:       []api.Toleration{{Key: "dedicated", Operator: "Equal", Value: "workers", Effect: "NoSchedule"}, {Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To[int64](300)}},
		PriorityClassName: "batch-low",
		// 120s: the worker library drains for 115s.
		TerminationGracePeriodSeconds: ptr.To[int64](120),
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64", "arm64"}}}}}}}},
		// No selector: it spreads the component's own pods.
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
			WhenUnsatisfiable: corev1.ScheduleAnyway}},
		// A worker written without the library, probed its own way.
		Probes: &api.Probes{
			Liveness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/live", Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 20},
			Readiness: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/ledger", "ready"}}}},
		},
	})

	return []renderCase{
		{"pod-essentials", pod, withMintedCredentials()},
		{"minimal", component("minimal", api.Spec{}), testCluster()},
		{"scaled-to-zero", scaled, withCredentials()},
		{"fixed-replicas", fixed, testCluster()},
		{"egress-none", component("quiet", api.Spec{Egress: api.Egress{Mode: api.EgressNone}}), withCredentials()},
		{"egress-cluster", component("fetcher", api.Spec{Egress: api.Egress{Mode: api.EgressCluster}}), testCluster()},
		{"egress-internet", component("notifier", api.Spec{Egress: api.Egress{Mode: api.EgressInternet}}), testCluster()},
		{"egress-allow", allow, testCluster()},
		{"minted-credentials", component("minted", api.Spec{Jobs: api.Jobs{Publish: []string{"jobs.minted.done"}}}), withMintedCredentials()},
		{"egress-internet-dual-stack", component("publisher", api.Spec{Egress: api.Egress{Mode: api.EgressInternet}}), networkCluster()},
		{"no-collector", component("offline", api.Spec{Egress: api.Egress{Mode: api.EgressInternet}}), withoutCollector()},
	}
}

// mustRender defaults and renders tc, failing the test on error.
func mustRender(tb testing.TB, tc renderCase) render.Objects {
	tb.Helper()
	objs, err := render.Render(defaults.Apply(tc.component), testRevision, tc.cluster)
	if err != nil {
		tb.Fatalf("Render(%s): %v", tc.name, err)
	}
	return objs
}
