package validate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
)

// eu selects the clusters labelled region=eu.
func eu() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}
}

func TestOverrideValidationReportsFieldPaths(t *testing.T) {
	ok := api.Override{Clusters: []string{"eu-1"}, Image: "registry.example.com/acme/extractor:1.4.3"}
	tests := []struct {
		name      string
		fixed     bool // the base spec has replicas instead of scaling
		overrides []api.Override
		want      []string
	}{
		{name: "a valid override of every field", overrides: []api.Override{{
			Clusters: []string{"eu-1", "eu-2"}, ClusterSelector: eu(),
			Image:       "registry.example.com/acme/extractor:1.4.3",
			MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](5),
			Env:       []api.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}, {Name: "REGION", Value: "eu"}},
			Resources: &api.Resources{Limits: map[string]string{"memory": "1Gi"}},
		}}},
		{name: "replicas on a component with fixed replicas", fixed: true,
			overrides: []api.Override{{ClusterSelector: eu(), Replicas: ptr.To[int32](0)}}},
		{name: "no cluster selection", overrides: []api.Override{ok, {Image: ok.Image}},
			want: want(problem{required, "spec.overrides[1]"})},
		{name: "sets nothing", overrides: []api.Override{{Clusters: []string{"eu-1"}, Env: []api.EnvVar{}, Resources: &api.Resources{}}},
			want: want(problem{required, "spec.overrides[0]"})},
		{name: "neither selects nor sets", overrides: []api.Override{{}},
			want: want(problem{required, "spec.overrides[0]"}, problem{required, "spec.overrides[0]"})},
		{name: "unpinned image", overrides: []api.Override{ok, {Clusters: []string{"us-1"}, Image: "acme/extractor"}},
			want: want(problem{invalid, "spec.overrides[1].image"})},
		{name: "bad cluster names", overrides: []api.Override{{Clusters: []string{"EU_1", "eu-2", "eu-2"}, Image: ok.Image}},
			want: want(problem{invalid, "spec.overrides[0].clusters[0]"}, problem{duplicate, "spec.overrides[0].clusters[2]"})},
		{name: "invalid selector", overrides: []api.Override{{Image: ok.Image, ClusterSelector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{"region": "not a value"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}}},
			want: want(problem{invalid, "spec.overrides[0].clusterSelector.matchLabels"},
				problem{invalid, "spec.overrides[0].clusterSelector.matchExpressions[0].operator"})},
		{name: "replicas out of range", fixed: true, overrides: []api.Override{{Clusters: []string{"eu-1"}, Replicas: ptr.To[int32](1001)}},
			want: want(problem{invalid, "spec.overrides[0].replicas"})},
		{name: "replicas on a scaled component", overrides: []api.Override{{Clusters: []string{"eu-1"}, Replicas: ptr.To[int32](2)}},
			want: want(problem{forbidden, "spec.overrides[0].replicas"})},
		{name: "scaling limits on a component with fixed replicas", fixed: true,
			overrides: []api.Override{{Clusters: []string{"eu-1"}, MaxReplicas: ptr.To[int32](3)}},
			want:      want(problem{forbidden, "spec.overrides[0].maxReplicas"})},
		{name: "scaling limits out of range and crossed", overrides: []api.Override{
			{Clusters: []string{"eu-1"}, MaxReplicas: ptr.To[int32](0)},
			{Clusters: []string{"eu-1"}, MinReplicas: ptr.To[int32](4), MaxReplicas: ptr.To[int32](2)}},
			want: want(problem{invalid, "spec.overrides[0].maxReplicas"}, problem{invalid, "spec.overrides[1].minReplicas"})},
		{name: "reserved and duplicate env", overrides: []api.Override{{Clusters: []string{"eu-1"},
			Env: []api.EnvVar{{Name: "NATS_URL", Value: "x"}, {Name: "A", Value: "1"}, {Name: "A", Value: "2"}}}},
			want: want(problem{forbidden, "spec.overrides[0].env[0].name"}, problem{duplicate, "spec.overrides[0].env[2].name"})},
		{name: "bad resources", overrides: []api.Override{{Clusters: []string{"eu-1"}, Resources: &api.Resources{
			Requests: map[string]string{"gpu": "1", "cpu": "2"}, Limits: map[string]string{"cpu": "1"}}}},
			want: want(problem{notSupported, "spec.overrides[0].resources.requests[gpu]"}, problem{invalid, "spec.overrides[0].resources.requests[cpu]"})},
		{name: "too many", overrides: func() []api.Override {
			out := make([]api.Override, MaxOverrides+1)
			for i := range out {
				out[i] = ok
			}
			return out
		}(), want: want(problem{tooMany, "spec.overrides"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validComponent()
			if tt.fixed {
				c.Spec.Scaling, c.Spec.Replicas = nil, ptr.To[int32](2)
			}
			c.Spec.Overrides = tt.overrides
			if diff := cmp.Diff(tt.want, problems(Component(c)), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEveryOverrideProblemIsInOneMessage(t *testing.T) {
	c := validComponent()
	c.Spec.Overrides = []api.Override{
		{Clusters: []string{"eu-1"}, Image: "registry.example.com/acme/extractor:1.4.3"},
		{Clusters: []string{"us-1"}, Image: "acme/extractor"},
		{ClusterSelector: eu()},
	}
	msg := AsError(Component(c)).Error()
	for _, want := range []string{
		"invalid component (2 problems):",
		`* spec.overrides[1].image: Invalid value: "acme/extractor": pin a tag or digest`,
		"* spec.overrides[2]: Required value: set at least one of image, replicas, minReplicas, maxReplicas, env, resources",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestOverrideWarnings(t *testing.T) {
	c := validComponent() // placed on east and west
	c.Spec.Overrides = []api.Override{
		{Clusters: []string{"east", "north"}, Image: "registry.example.com/acme/extractor:latest"},
		{ClusterSelector: eu(), Env: []api.EnvVar{{Name: "REGION", Value: "eu"}}},
	}
	want := []string{
		`spec.overrides[0].image: "registry.example.com/acme/extractor:latest" is pinned by the moving tag latest: pods may run different builds and a new build is not rolled out; pin a version tag or a digest`,
		`spec.overrides[0].clusters[1]: cluster "north" is not in spec.placement.clusters: the component does not run there`,
	}
	if diff := cmp.Diff(want, Warnings(c)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
