package validate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/workerenv"
)

// validComponent returns a defaulted component that passes Validate; each
// test case breaks one thing in it.
func validComponent() api.Component {
	return defaults.Apply(api.Component{
		APIVersion: api.APIVersion,
		Kind:       api.Kind,
		Metadata: api.Metadata{
			Name: "extractor", Namespace: "workers",
			Labels:      map[string]string{"team": "docs"},
			Annotations: map[string]string{"example.com/owner": "docs"},
		},
		Spec: api.Spec{
			Image: "registry.example.com/acme/extractor:1.4.2",
			Env:   []api.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "MODE", Value: "pdf"}},
			Resources: &api.Resources{
				Requests: map[string]string{"cpu": "100m", "memory": "128Mi"},
				Limits:   map[string]string{"memory": "256Mi"},
			},
			Jobs: api.Jobs{
				Subjects: []string{"jobs.extract.>", "jobs.ocr.*"},
				Consumer: api.ConsumerSpec{Backoff: []api.Duration{"30s", "1m"}},
			},
			Scaling:   &api.Scaling{MinReplicas: 0, MaxReplicas: 20},
			Egress:    api.Egress{Mode: api.EgressAllow, Allow: []api.EgressRule{{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}, Ports: []api.Port{{Port: 443}}}}},
			Placement: &api.Placement{Clusters: []string{"east", "west"}, ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
		},
	})
}

// problem is one expected validation error: its type and field path.
type problem struct {
	typ  field.ErrorType
	path string
}

func problems(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s", e.Type, e.Field))
	}
	slices.Sort(out)
	return out
}

func want(ps ...problem) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %s", p.typ, p.path))
	}
	slices.Sort(out)
	return out
}

const (
	invalid      = field.ErrorTypeInvalid
	required     = field.ErrorTypeRequired
	forbidden    = field.ErrorTypeForbidden
	duplicate    = field.ErrorTypeDuplicate
	notSupported = field.ErrorTypeNotSupported
	tooLong      = field.ErrorTypeTooLong
	tooMany      = field.ErrorTypeTooMany
)

func TestValidateAcceptsValidComponent(t *testing.T) {
	if errs := Component(validComponent()); len(errs) > 0 {
		t.Fatalf("valid component rejected:\n%v", AsError(errs))
	}
}

func TestTheDevRunAnnotationIsTheUsersAndOnlyAnAnnotation(t *testing.T) {
	c := validComponent()
	c.Metadata.Annotations[api.AnnotationDevRun] = "go run ./examples/worker"
	if errs := Component(c); len(errs) > 0 {
		t.Errorf("%s refused as an annotation:\n%v", api.AnnotationDevRun, AsError(errs))
	}
	c.Metadata.Labels[api.AnnotationDevRun] = "x"
	if errs := Component(c); len(errs) == 0 || errs[0].Field != "metadata.labels[dev.tinyctl.io/run]" {
		t.Errorf("%s as a label: got %v, want it forbidden", api.AnnotationDevRun, errs)
	}
}

func TestValidateReportsFieldPaths(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *api.Component)
		want   []string
	}{
		{"wrong apiVersion", func(c *api.Component) { c.APIVersion = "tinyctl.io/v1" }, want(problem{notSupported, "apiVersion"})},
		{"wrong kind", func(c *api.Component) { c.Kind = "Deployment" }, want(problem{notSupported, "kind"})},
		{"missing name", func(c *api.Component) { c.Metadata.Name = "" }, want(problem{required, "metadata.name"})},
		{"name longer than 52", func(c *api.Component) { c.Metadata.Name = strings.Repeat("a", 53) }, want(problem{tooLong, "metadata.name"})},
		{"name not a DNS label", func(c *api.Component) { c.Metadata.Name = "PDF_Extractor" }, want(problem{invalid, "metadata.name"})},
		{"namespace with a dot", func(c *api.Component) { c.Metadata.Namespace = "team.docs" }, want(problem{invalid, "metadata.namespace"})},
		{"bad label value", func(c *api.Component) { c.Metadata.Labels["team"] = "docs and more" }, want(problem{invalid, "metadata.labels"})},
		{"reserved tinyctl label", func(c *api.Component) { c.Metadata.Labels["tinyctl.io/component"] = "x" },
			want(problem{forbidden, "metadata.labels[tinyctl.io/component]"})},
		{"reserved managed-by label", func(c *api.Component) { c.Metadata.Labels[ManagedByLabel] = "me" },
			want(problem{forbidden, "metadata.labels[app.kubernetes.io/managed-by]"})},
		{"label other controllers act on", func(c *api.Component) {
			c.Metadata.Labels["sidecar.istio.io/inject"] = "true"
			c.Metadata.Labels["azure.workload.identity/use"] = "true"
			c.Metadata.Labels["node-role.kubernetes.io/control-plane"] = ""
			c.Metadata.Labels["app.kubernetes.io/part-of"] = "docs" // allowed
			c.Metadata.Labels["example.com/cost-center"] = "fin-42" // allowed
		}, want(problem{forbidden, "metadata.labels[azure.workload.identity/use]"},
			problem{forbidden, "metadata.labels[node-role.kubernetes.io/control-plane]"},
			problem{forbidden, "metadata.labels[sidecar.istio.io/inject]"})},
		{"reserved annotation subdomain", func(c *api.Component) { c.Metadata.Annotations["hash.tinyctl.io/x"] = "1" },
			want(problem{forbidden, "metadata.annotations[hash.tinyctl.io/x]"})},
		{"missing image", func(c *api.Component) { c.Spec.Image = "" }, want(problem{required, "spec.image"})},
		{"image without tag or digest", func(c *api.Component) { c.Spec.Image = "registry.example.com/acme/extractor" }, want(problem{invalid, "spec.image"})},
		{"image with uppercase path", func(c *api.Component) { c.Spec.Image = "acme/Extractor:1.0" }, want(problem{invalid, "spec.image"})},
		{"image with short digest", func(c *api.Component) { c.Spec.Image = "acme/extractor@sha256:abc" }, want(problem{invalid, "spec.image"})},
		{"env name starting with a digit", func(c *api.Component) { c.Spec.Env[0].Name = "1LOG" }, want(problem{invalid, "spec.env[0].name"})},
		{"env name tinyctl sets", func(c *api.Component) { c.Spec.Env[1].Name = workerenv.NATSURL }, want(problem{forbidden, "spec.env[1].name"})},
		{"env name under TINYCTL_", func(c *api.Component) { c.Spec.Env[0].Name = "TINYCTL_DEBUG" }, want(problem{forbidden, "spec.env[0].name"})},
		{"duplicate env name", func(c *api.Component) { c.Spec.Env[1].Name = "LOG_LEVEL" }, want(problem{duplicate, "spec.env[1].name"})},
		{"unknown resource", func(c *api.Component) { c.Spec.Resources.Limits["nvidia.com/gpu"] = "1" },
			want(problem{notSupported, "spec.resources.limits[nvidia.com/gpu]"})},
		{"unparsable quantity", func(c *api.Component) { c.Spec.Resources.Limits["memory"] = "lots" },
			want(problem{invalid, "spec.resources.limits[memory]"})},
		{"negative quantity", func(c *api.Component) { c.Spec.Resources.Requests["cpu"] = "-1" },
			want(problem{invalid, "spec.resources.requests[cpu]"})},
		{"request above limit", func(c *api.Component) { c.Spec.Resources.Requests["memory"] = "1Gi" },
			want(problem{invalid, "spec.resources.requests[memory]"})},
		{"no subjects", func(c *api.Component) { c.Spec.Jobs.Subjects = nil }, want(problem{required, "spec.jobs.subjects"})},
		{"empty subject", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "" }, want(problem{required, "spec.jobs.subjects[1]"})},
		{"full wildcard", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = ">" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"leading wildcard", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "*.>" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"JetStream API subject", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "$JS.API.>" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"KV subject", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "$KV.tinyctl-components.>" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"inbox subject", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "_INBOX.abc" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"empty token", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "jobs..ocr" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"partial wildcard token", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "jobs.ocr*" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"> before the last token", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "jobs.>.ocr" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"whitespace in subject", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "jobs.ocr pdf" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"duplicate subject", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "jobs.extract.>" }, want(problem{duplicate, "spec.jobs.subjects[1]"})},
		{"subject inside another", func(c *api.Component) { c.Spec.Jobs.Subjects[1] = "jobs.extract.pdf" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"subjects overlapping partly", func(c *api.Component) { c.Spec.Jobs.Subjects = []string{"jobs.*.pdf", "jobs.ocr.*"} },
			want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"stream replicas above 5", func(c *api.Component) { c.Spec.Jobs.Stream.Replicas = 6 }, want(problem{invalid, "spec.jobs.stream.replicas"})},
		{"unknown storage", func(c *api.Component) { c.Spec.Jobs.Stream.Storage = "disk" }, want(problem{notSupported, "spec.jobs.stream.storage"})},
		{"maxAge not a duration", func(c *api.Component) { c.Spec.Jobs.Stream.MaxAge = "3 days" }, want(problem{invalid, "spec.jobs.stream.maxAge"})},
		{"negative maxAge", func(c *api.Component) { c.Spec.Jobs.Stream.MaxAge = "-1h" }, want(problem{invalid, "spec.jobs.stream.maxAge"})},
		{"duplicateWindow above maxAge", func(c *api.Component) { c.Spec.Jobs.Stream.MaxAge = "1m" }, want(problem{invalid, "spec.jobs.stream.duplicateWindow"})},
		{"zero duplicateWindow", func(c *api.Component) { c.Spec.Jobs.Stream.DuplicateWindow = "0s" }, want(problem{invalid, "spec.jobs.stream.duplicateWindow"})},
		{"negative maxMsgs and maxBytes", func(c *api.Component) { c.Spec.Jobs.Stream.MaxMsgs, c.Spec.Jobs.Stream.MaxBytes = -1, -1 },
			want(problem{invalid, "spec.jobs.stream.maxMsgs"}, problem{invalid, "spec.jobs.stream.maxBytes"})},
		{"ackWait below 1s", func(c *api.Component) { c.Spec.Jobs.Consumer.AckWait = "500ms" }, want(problem{invalid, "spec.jobs.consumer.ackWait"})},
		{"ackWait above 12h", func(c *api.Component) { c.Spec.Jobs.Consumer.AckWait = "13h" }, want(problem{invalid, "spec.jobs.consumer.ackWait"})},
		{"unlimited maxDeliver", func(c *api.Component) { c.Spec.Jobs.Consumer.MaxDeliver = -1 }, want(problem{invalid, "spec.jobs.consumer.maxDeliver"})},
		{"negative maxAckPending", func(c *api.Component) { c.Spec.Jobs.Consumer.MaxAckPending = -1 }, want(problem{invalid, "spec.jobs.consumer.maxAckPending"})},
		{"zero backoff", func(c *api.Component) { c.Spec.Jobs.Consumer.Backoff[1] = "0s" }, want(problem{invalid, "spec.jobs.consumer.backoff[1]"})},
		{"more backoffs than deliveries", func(c *api.Component) { c.Spec.Jobs.Consumer.MaxDeliver = 1 }, want(problem{tooMany, "spec.jobs.consumer.backoff"})},
		{"replicas with scaling", func(c *api.Component) { c.Spec.Replicas = ptr.To(int32(2)) }, want(problem{forbidden, "spec.replicas"})},
		{"replicas above 1000", func(c *api.Component) { c.Spec.Scaling, c.Spec.Replicas = nil, ptr.To(int32(1001)) }, want(problem{invalid, "spec.replicas"})},
		{"minReplicas above maxReplicas", func(c *api.Component) { c.Spec.Scaling.MinReplicas = 30 }, want(problem{invalid, "spec.scaling.minReplicas"})},
		{"maxReplicas zero", func(c *api.Component) { c.Spec.Scaling.MaxReplicas = 0 }, want(problem{invalid, "spec.scaling.maxReplicas"})},
		{"negative lagThreshold", func(c *api.Component) { c.Spec.Scaling.LagThreshold = -1 }, want(problem{invalid, "spec.scaling.lagThreshold"})},
		{"unknown egress word", func(c *api.Component) { c.Spec.Egress = api.Egress{Mode: "everything"} }, want(problem{notSupported, "spec.egress"})},
		{"allow without rules", func(c *api.Component) { c.Spec.Egress.Allow = nil }, want(problem{required, "spec.egress.allow"})},
		{"rules under none", func(c *api.Component) { c.Spec.Egress.Mode = api.EgressNone }, want(problem{forbidden, "spec.egress.allow"})},
		{"rule with cidr and namespace", func(c *api.Component) { c.Spec.Egress.Allow[0].Namespace = "search" }, want(problem{forbidden, "spec.egress.allow[0]"})},
		{"rule without peer", func(c *api.Component) { c.Spec.Egress.Allow[0] = api.EgressRule{Ports: []api.Port{{Port: 443}}} }, want(problem{required, "spec.egress.allow[0]"})},
		{"cidr not canonical", func(c *api.Component) { c.Spec.Egress.Allow[0].CIDR = "10.0.0.1/8" }, want(problem{invalid, "spec.egress.allow[0].cidr"})},
		{"except outside cidr", func(c *api.Component) { c.Spec.Egress.Allow[0].Except = []string{"192.168.0.0/16"} },
			want(problem{invalid, "spec.egress.allow[0].except[0]"})},
		{"except without cidr", func(c *api.Component) {
			c.Spec.Egress.Allow[0] = api.EgressRule{Namespace: "search", Except: []string{"10.0.0.0/8"}}
		},
			want(problem{forbidden, "spec.egress.allow[0].except"})},
		{"port zero", func(c *api.Component) { c.Spec.Egress.Allow[0].Ports[0].Port = 0 }, want(problem{invalid, "spec.egress.allow[0].ports[0].port"})},
		{"unknown protocol", func(c *api.Component) { c.Spec.Egress.Allow[0].Ports[0].Protocol = "HTTP" },
			want(problem{notSupported, "spec.egress.allow[0].ports[0].protocol"})},
		{"bad cluster name", func(c *api.Component) { c.Spec.Placement.Clusters[0] = "East_1" }, want(problem{invalid, "spec.placement.clusters[0]"})},
		{"duplicate cluster", func(c *api.Component) { c.Spec.Placement.Clusters[1] = "east" }, want(problem{duplicate, "spec.placement.clusters[1]"})},
		{"bad selector operator", func(c *api.Component) {
			c.Spec.Placement.ClusterSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Like"}}
		}, want(problem{invalid, "spec.placement.clusterSelector.matchExpressions[0].operator"})},
		{"unknown deletion policy", func(c *api.Component) { c.Spec.Deletion.Stream = "Purge" }, want(problem{notSupported, "spec.deletion.stream"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validComponent()
			tt.mutate(&c)
			if diff := cmp.Diff(tt.want, problems(Component(c))); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerror: %v", diff, AsError(Component(c)))
			}
		})
	}
}

func TestValidateReportsEveryProblemInOneError(t *testing.T) {
	c, err := decode.Component([]byte(`
apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: Extractor}
spec:
  image: acme/extractor
  env: [{name: NATS_URL, value: nats://elsewhere:4222}]
  jobs:
    subjects: ["jobs.extract", ">"]
  egress: everywhere
`))
	if err != nil {
		t.Fatal(err)
	}
	err = AsError(Component(defaults.Apply(c)))
	wantMsg := `invalid component (5 problems):
* metadata.name: Invalid value: "Extractor": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')
* spec.image: Invalid value: "acme/extractor": pin a tag or digest, e.g. worker:1.2.3 or worker@sha256:<64 hex digits>
* spec.env[0].name: Forbidden: NATS_URL is set by tinyctl (reserved: NATS_URL, NATS_CREDS, NATS_CA, NATS_CERT, NATS_KEY, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME and every TINYCTL_* name)
* spec.jobs.subjects[1]: Invalid value: ">": the first token must be literal: a subject that starts with a wildcard would capture other components' jobs
* spec.egress: Unsupported value: "everywhere": supported values: "none", "cluster", "internet", "{allow: [...]}"`
	if err == nil || err.Error() != wantMsg {
		t.Errorf("error:\n%v\nwant:\n%s", err, wantMsg)
	}
}

func TestAsErrorOnOneLineForOneProblem(t *testing.T) {
	c := validComponent()
	c.Spec.Image = ""
	err := AsError(Component(c))
	want := "invalid component: spec.image: Required value: an image reference such as registry.example.com/team/worker:1.2.3"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if !isInvalid(err) {
		t.Errorf("errors.Is(%v, api.ErrInvalid) = false", err)
	}
	if AsError(nil) != nil {
		t.Error("AsError(nil) is not nil")
	}
}

func TestNormalizeDefaultsThenValidates(t *testing.T) {
	c := validComponent()
	c.Spec.Jobs.Stream = api.StreamSpec{}
	got, err := Normalize(c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Jobs.Stream.MaxAge != defaults.MaxAge {
		t.Errorf("maxAge = %q, want the default %q", got.Spec.Jobs.Stream.MaxAge, defaults.MaxAge)
	}
	c.Spec.Image = "nope"
	if _, err := Normalize(c); !isInvalid(err) {
		t.Errorf("Normalize(bad image) = %v, want api.ErrInvalid", err)
	}
}

func isInvalid(err error) bool { return errors.Is(err, api.ErrInvalid) }
