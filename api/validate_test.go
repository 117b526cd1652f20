package api

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validComponent returns a defaulted component that passes Validate; each
// test case breaks one thing in it.
func validComponent() Component {
	return Default(Component{
		APIVersion: APIVersion,
		Kind:       Kind,
		Metadata: Metadata{
			Name: "extractor", Namespace: "workers",
			Labels:      map[string]string{"team": "docs"},
			Annotations: map[string]string{"example.com/owner": "docs"},
		},
		Spec: Spec{
			Image: "registry.example.com/acme/extractor:1.4.2",
			Env:   []EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "MODE", Value: "pdf"}},
			Resources: &Resources{
				Requests: map[string]string{"cpu": "100m", "memory": "128Mi"},
				Limits:   map[string]string{"memory": "256Mi"},
			},
			Jobs: Jobs{
				Subjects: []string{"jobs.extract.>", "jobs.ocr.*"},
				Consumer: ConsumerSpec{Backoff: []Duration{"30s", "1m"}},
			},
			Scaling:   &Scaling{MinReplicas: 0, MaxReplicas: 20},
			Egress:    Egress{Mode: EgressAllow, Allow: []EgressRule{{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}, Ports: []Port{{Port: 443}}}}},
			Placement: &Placement{Clusters: []string{"east", "west"}, ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
		},
	})
}

func ptr[T any](v T) *T { return &v }

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
	if errs := Validate(validComponent()); len(errs) > 0 {
		t.Fatalf("valid component rejected:\n%v", ValidationError(errs))
	}
}

func TestValidateReportsFieldPaths(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Component)
		want   []string
	}{
		{"wrong apiVersion", func(c *Component) { c.APIVersion = "tinyctl.io/v1" }, want(problem{notSupported, "apiVersion"})},
		{"wrong kind", func(c *Component) { c.Kind = "Deployment" }, want(problem{notSupported, "kind"})},
		{"missing name", func(c *Component) { c.Metadata.Name = "" }, want(problem{required, "metadata.name"})},
		{"name longer than 52", func(c *Component) { c.Metadata.Name = strings.Repeat("a", 53) }, want(problem{tooLong, "metadata.name"})},
		{"name not a DNS label", func(c *Component) { c.Metadata.Name = "PDF_Extractor" }, want(problem{invalid, "metadata.name"})},
		{"namespace with a dot", func(c *Component) { c.Metadata.Namespace = "team.docs" }, want(problem{invalid, "metadata.namespace"})},
		{"bad label value", func(c *Component) { c.Metadata.Labels["team"] = "docs and more" }, want(problem{invalid, "metadata.labels"})},
		{"reserved tinyctl label", func(c *Component) { c.Metadata.Labels["tinyctl.io/component"] = "x" },
			want(problem{forbidden, "metadata.labels[tinyctl.io/component]"})},
		{"reserved managed-by label", func(c *Component) { c.Metadata.Labels[ManagedByLabel] = "me" },
			want(problem{forbidden, "metadata.labels[app.kubernetes.io/managed-by]"})},
		{"reserved annotation subdomain", func(c *Component) { c.Metadata.Annotations["hash.tinyctl.io/x"] = "1" },
			want(problem{forbidden, "metadata.annotations[hash.tinyctl.io/x]"})},
		{"missing image", func(c *Component) { c.Spec.Image = "" }, want(problem{required, "spec.image"})},
		{"image without tag or digest", func(c *Component) { c.Spec.Image = "registry.example.com/acme/extractor" }, want(problem{invalid, "spec.image"})},
		{"image with uppercase path", func(c *Component) { c.Spec.Image = "acme/Extractor:1.0" }, want(problem{invalid, "spec.image"})},
		{"image with short digest", func(c *Component) { c.Spec.Image = "acme/extractor@sha256:abc" }, want(problem{invalid, "spec.image"})},
		{"env name starting with a digit", func(c *Component) { c.Spec.Env[0].Name = "1LOG" }, want(problem{invalid, "spec.env[0].name"})},
		{"env name tinyctl sets", func(c *Component) { c.Spec.Env[1].Name = EnvNATSURL }, want(problem{forbidden, "spec.env[1].name"})},
		{"env name under TINYCTL_", func(c *Component) { c.Spec.Env[0].Name = "TINYCTL_DEBUG" }, want(problem{forbidden, "spec.env[0].name"})},
		{"duplicate env name", func(c *Component) { c.Spec.Env[1].Name = "LOG_LEVEL" }, want(problem{duplicate, "spec.env[1].name"})},
		{"unknown resource", func(c *Component) { c.Spec.Resources.Limits["nvidia.com/gpu"] = "1" },
			want(problem{notSupported, "spec.resources.limits[nvidia.com/gpu]"})},
		{"unparsable quantity", func(c *Component) { c.Spec.Resources.Limits["memory"] = "lots" },
			want(problem{invalid, "spec.resources.limits[memory]"})},
		{"negative quantity", func(c *Component) { c.Spec.Resources.Requests["cpu"] = "-1" },
			want(problem{invalid, "spec.resources.requests[cpu]"})},
		{"request above limit", func(c *Component) { c.Spec.Resources.Requests["memory"] = "1Gi" },
			want(problem{invalid, "spec.resources.requests[memory]"})},
		{"no subjects", func(c *Component) { c.Spec.Jobs.Subjects = nil }, want(problem{required, "spec.jobs.subjects"})},
		{"empty subject", func(c *Component) { c.Spec.Jobs.Subjects[1] = "" }, want(problem{required, "spec.jobs.subjects[1]"})},
		{"full wildcard", func(c *Component) { c.Spec.Jobs.Subjects[1] = ">" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"leading wildcard", func(c *Component) { c.Spec.Jobs.Subjects[1] = "*.>" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"JetStream API subject", func(c *Component) { c.Spec.Jobs.Subjects[1] = "$JS.API.>" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"KV subject", func(c *Component) { c.Spec.Jobs.Subjects[1] = "$KV.tinyctl-components.>" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"inbox subject", func(c *Component) { c.Spec.Jobs.Subjects[1] = "_INBOX.abc" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"empty token", func(c *Component) { c.Spec.Jobs.Subjects[1] = "jobs..ocr" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"partial wildcard token", func(c *Component) { c.Spec.Jobs.Subjects[1] = "jobs.ocr*" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"> before the last token", func(c *Component) { c.Spec.Jobs.Subjects[1] = "jobs.>.ocr" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"whitespace in subject", func(c *Component) { c.Spec.Jobs.Subjects[1] = "jobs.ocr pdf" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"duplicate subject", func(c *Component) { c.Spec.Jobs.Subjects[1] = "jobs.extract.>" }, want(problem{duplicate, "spec.jobs.subjects[1]"})},
		{"subject inside another", func(c *Component) { c.Spec.Jobs.Subjects[1] = "jobs.extract.pdf" }, want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"subjects overlapping partly", func(c *Component) { c.Spec.Jobs.Subjects = []string{"jobs.*.pdf", "jobs.ocr.*"} },
			want(problem{invalid, "spec.jobs.subjects[1]"})},
		{"stream replicas above 5", func(c *Component) { c.Spec.Jobs.Stream.Replicas = 6 }, want(problem{invalid, "spec.jobs.stream.replicas"})},
		{"unknown storage", func(c *Component) { c.Spec.Jobs.Stream.Storage = "disk" }, want(problem{notSupported, "spec.jobs.stream.storage"})},
		{"maxAge not a duration", func(c *Component) { c.Spec.Jobs.Stream.MaxAge = "3 days" }, want(problem{invalid, "spec.jobs.stream.maxAge"})},
		{"negative maxAge", func(c *Component) { c.Spec.Jobs.Stream.MaxAge = "-1h" }, want(problem{invalid, "spec.jobs.stream.maxAge"})},
		{"duplicateWindow above maxAge", func(c *Component) { c.Spec.Jobs.Stream.MaxAge = "1m" }, want(problem{invalid, "spec.jobs.stream.duplicateWindow"})},
		{"zero duplicateWindow", func(c *Component) { c.Spec.Jobs.Stream.DuplicateWindow = "0s" }, want(problem{invalid, "spec.jobs.stream.duplicateWindow"})},
		{"negative maxMsgs and maxBytes", func(c *Component) { c.Spec.Jobs.Stream.MaxMsgs, c.Spec.Jobs.Stream.MaxBytes = -1, -1 },
			want(problem{invalid, "spec.jobs.stream.maxMsgs"}, problem{invalid, "spec.jobs.stream.maxBytes"})},
		{"ackWait below 1s", func(c *Component) { c.Spec.Jobs.Consumer.AckWait = "500ms" }, want(problem{invalid, "spec.jobs.consumer.ackWait"})},
		{"ackWait above 12h", func(c *Component) { c.Spec.Jobs.Consumer.AckWait = "13h" }, want(problem{invalid, "spec.jobs.consumer.ackWait"})},
		{"unlimited maxDeliver", func(c *Component) { c.Spec.Jobs.Consumer.MaxDeliver = -1 }, want(problem{invalid, "spec.jobs.consumer.maxDeliver"})},
		{"negative maxAckPending", func(c *Component) { c.Spec.Jobs.Consumer.MaxAckPending = -1 }, want(problem{invalid, "spec.jobs.consumer.maxAckPending"})},
		{"zero backoff", func(c *Component) { c.Spec.Jobs.Consumer.Backoff[1] = "0s" }, want(problem{invalid, "spec.jobs.consumer.backoff[1]"})},
		{"more backoffs than deliveries", func(c *Component) { c.Spec.Jobs.Consumer.MaxDeliver = 1 }, want(problem{tooMany, "spec.jobs.consumer.backoff"})},
		{"replicas with scaling", func(c *Component) { c.Spec.Replicas = ptr(int32(2)) }, want(problem{forbidden, "spec.replicas"})},
		{"replicas above 1000", func(c *Component) { c.Spec.Scaling, c.Spec.Replicas = nil, ptr(int32(1001)) }, want(problem{invalid, "spec.replicas"})},
		{"minReplicas above maxReplicas", func(c *Component) { c.Spec.Scaling.MinReplicas = 30 }, want(problem{invalid, "spec.scaling.minReplicas"})},
		{"maxReplicas zero", func(c *Component) { c.Spec.Scaling.MaxReplicas = 0 }, want(problem{invalid, "spec.scaling.maxReplicas"})},
		{"negative lagThreshold", func(c *Component) { c.Spec.Scaling.LagThreshold = -1 }, want(problem{invalid, "spec.scaling.lagThreshold"})},
		{"unknown egress word", func(c *Component) { c.Spec.Egress = Egress{Mode: "everything"} }, want(problem{notSupported, "spec.egress"})},
		{"allow without rules", func(c *Component) { c.Spec.Egress.Allow = nil }, want(problem{required, "spec.egress.allow"})},
		{"rules under none", func(c *Component) { c.Spec.Egress.Mode = EgressNone }, want(problem{forbidden, "spec.egress.allow"})},
		{"rule with cidr and namespace", func(c *Component) { c.Spec.Egress.Allow[0].Namespace = "search" }, want(problem{forbidden, "spec.egress.allow[0]"})},
		{"rule without peer", func(c *Component) { c.Spec.Egress.Allow[0] = EgressRule{Ports: []Port{{Port: 443}}} }, want(problem{required, "spec.egress.allow[0]"})},
		{"cidr not canonical", func(c *Component) { c.Spec.Egress.Allow[0].CIDR = "10.0.0.1/8" }, want(problem{invalid, "spec.egress.allow[0].cidr"})},
		{"except outside cidr", func(c *Component) { c.Spec.Egress.Allow[0].Except = []string{"192.168.0.0/16"} },
			want(problem{invalid, "spec.egress.allow[0].except[0]"})},
		{"except without cidr", func(c *Component) {
			c.Spec.Egress.Allow[0] = EgressRule{Namespace: "search", Except: []string{"10.0.0.0/8"}}
		},
			want(problem{forbidden, "spec.egress.allow[0].except"})},
		{"port zero", func(c *Component) { c.Spec.Egress.Allow[0].Ports[0].Port = 0 }, want(problem{invalid, "spec.egress.allow[0].ports[0].port"})},
		{"unknown protocol", func(c *Component) { c.Spec.Egress.Allow[0].Ports[0].Protocol = "HTTP" },
			want(problem{notSupported, "spec.egress.allow[0].ports[0].protocol"})},
		{"bad cluster name", func(c *Component) { c.Spec.Placement.Clusters[0] = "East_1" }, want(problem{invalid, "spec.placement.clusters[0]"})},
		{"duplicate cluster", func(c *Component) { c.Spec.Placement.Clusters[1] = "east" }, want(problem{duplicate, "spec.placement.clusters[1]"})},
		{"bad selector operator", func(c *Component) {
			c.Spec.Placement.ClusterSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Like"}}
		}, want(problem{invalid, "spec.placement.clusterSelector.matchExpressions[0].operator"})},
		{"unknown deletion policy", func(c *Component) { c.Spec.Deletion.Stream = "Purge" }, want(problem{notSupported, "spec.deletion.stream"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validComponent()
			tt.mutate(&c)
			if diff := cmp.Diff(tt.want, problems(Validate(c))); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerror: %v", diff, ValidationError(Validate(c)))
			}
		})
	}
}

func TestValidateReportsEveryProblemInOneError(t *testing.T) {
	c, err := Decode([]byte(`
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
	err = ValidationError(Validate(Default(c)))
	wantMsg := `invalid component (5 problems):
* metadata.name: Invalid value: "Extractor": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')
* spec.image: Invalid value: "acme/extractor": pin a tag or digest, e.g. worker:1.2.3 or worker@sha256:<64 hex digits>
* spec.env[0].name: Forbidden: NATS_URL is set by tinyctl (reserved: NATS_URL, NATS_CREDS and every TINYCTL_* name)
* spec.jobs.subjects[1]: Invalid value: ">": the first token must be literal: a subject that starts with a wildcard would capture other components' jobs
* spec.egress: Unsupported value: "everywhere": supported values: "none", "cluster", "internet", "{allow: [...]}"`
	if err == nil || err.Error() != wantMsg {
		t.Errorf("error:\n%v\nwant:\n%s", err, wantMsg)
	}
}

func TestValidationErrorOnOneLineForOneProblem(t *testing.T) {
	c := validComponent()
	c.Spec.Image = ""
	err := ValidationError(Validate(c))
	want := "invalid component: spec.image: Required value: an image reference such as registry.example.com/team/worker:1.2.3"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if !errorsIsInvalid(err) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
	}
	if ValidationError(nil) != nil {
		t.Error("ValidationError(nil) is not nil")
	}
}

func TestNormalizeDefaultsThenValidates(t *testing.T) {
	c := validComponent()
	c.Spec.Jobs.Stream = StreamSpec{}
	got, err := Normalize(c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Jobs.Stream.MaxAge != DefaultMaxAge {
		t.Errorf("maxAge = %q, want the default %q", got.Spec.Jobs.Stream.MaxAge, DefaultMaxAge)
	}
	c.Spec.Image = "nope"
	if _, err := Normalize(c); !errorsIsInvalid(err) {
		t.Errorf("Normalize(bad image) = %v, want ErrInvalid", err)
	}
}
