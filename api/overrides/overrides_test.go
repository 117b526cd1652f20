package overrides_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/overrides"
	"github.com/tinyctl/tinyctl/api/validate"
)

const (
	baseImage = "registry.example.com/acme/resizer:1.0.0"
	euImage   = "registry.example.com/acme/resizer:1.0.0-eu"
	canary    = "registry.example.com/acme/resizer:1.1.0-rc1"
)

var (
	eu1 = cluster.Identity{Name: "eu-1", Labels: map[string]string{"region": "eu", "tier": "gold"}}
	eu2 = cluster.Identity{Name: "eu-2", Labels: map[string]string{"region": "eu"}}
	us1 = cluster.Identity{Name: "us-1", Labels: map[string]string{"region": "us"}}
)

func region(r string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"region": r}}
}

// component is a valid scaled component with env and resources, carrying
// overrides os.
func component(os ...api.Override) api.Component {
	c, err := validate.Normalize(api.Component{
		APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: "resizer", Namespace: "media"},
		Spec: api.Spec{
			Image: baseImage,
			Env:   []api.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "MODE", Value: "fast"}},
			Resources: &api.Resources{
				Requests: map[string]string{"cpu": "100m", "memory": "128Mi"},
				Limits:   map[string]string{"memory": "256Mi"},
			},
			Jobs:         api.Jobs{Subjects: []string{"media.resize.>"}},
			Scaling:      &api.Scaling{MinReplicas: 2, MaxReplicas: 10},
			NodeSelector: map[string]string{"disktype": "ssd"},
			Tolerations:  []api.Toleration{{Key: "dedicated", Value: "media", Effect: "NoSchedule"}},
			Overrides:    os,
		},
	})
	if err != nil {
		panic(err)
	}
	return c
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name      string
		overrides []api.Override
		cluster   cluster.Identity
		edit      func(*api.Spec) // what the resolved spec differs in from the base
	}{
		{name: "no overrides: the base spec", cluster: eu1},
		{name: "an image for region=eu on an eu cluster",
			overrides: []api.Override{{ClusterSelector: region("eu"), Image: euImage}}, cluster: eu2,
			edit: func(s *api.Spec) { s.Image = euImage }},
		{name: "an image for region=eu elsewhere: the base", cluster: us1,
			overrides: []api.Override{{ClusterSelector: region("eu"), Image: euImage}}},
		{name: "by name", cluster: eu2,
			overrides: []api.Override{{Clusters: []string{"eu-1", "eu-2"}, Image: euImage}},
			edit:      func(s *api.Spec) { s.Image = euImage }},
		{name: "name and selector must both match", cluster: eu2,
			overrides: []api.Override{{Clusters: []string{"eu-2"}, ClusterSelector: region("us"), Image: euImage}}},
		{name: "env merges by name: replaced in place, new ones last", cluster: eu1,
			overrides: []api.Override{{ClusterSelector: region("eu"),
				Env: []api.EnvVar{{Name: "REGION", Value: "eu"}, {Name: "LOG_LEVEL", Value: "debug"}}}},
			edit: func(s *api.Spec) {
				s.Env = []api.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}, {Name: "MODE", Value: "fast"}, {Name: "REGION", Value: "eu"}}
			}},
		{name: "resources merge by name", cluster: eu1,
			overrides: []api.Override{{Clusters: []string{"eu-1"},
				Resources: &api.Resources{Requests: map[string]string{"memory": "512Mi"}, Limits: map[string]string{"memory": "1Gi", "cpu": "2"}}}},
			edit: func(s *api.Spec) {
				s.Resources = &api.Resources{
					Requests: map[string]string{"cpu": "100m", "memory": "512Mi"},
					Limits:   map[string]string{"cpu": "2", "memory": "1Gi"},
				}
			}},
		{name: "scaling limits", cluster: eu1,
			overrides: []api.Override{{ClusterSelector: region("eu"), MaxReplicas: ptr.To[int32](3)}},
			edit:      func(s *api.Spec) { s.Scaling.MaxReplicas = 3 }},
		{name: "overrides of different fields stack in list order", cluster: eu1,
			overrides: []api.Override{
				{ClusterSelector: region("eu"), Image: euImage, Env: []api.EnvVar{{Name: "A", Value: "1"}}},
				{Clusters: []string{"eu-1"}, MinReplicas: ptr.To[int32](0), Env: []api.EnvVar{{Name: "B", Value: "2"}}},
			},
			edit: func(s *api.Spec) {
				s.Image, s.Scaling.MinReplicas = euImage, 0
				s.Env = append(s.Env, api.EnvVar{Name: "A", Value: "1"}, api.EnvVar{Name: "B", Value: "2"})
			}},
		{name: "two overrides setting the same value agree", cluster: eu1,
			overrides: []api.Override{{ClusterSelector: region("eu"), Image: euImage}, {Clusters: []string{"eu-1"}, Image: euImage}},
			edit:      func(s *api.Spec) { s.Image = euImage }},
		{name: "a conflict on another cluster does not matter here", cluster: eu2,
			overrides: []api.Override{{ClusterSelector: region("eu"), Image: euImage}, {Clusters: []string{"eu-1"}, Image: canary}},
			edit:      func(s *api.Spec) { s.Image = euImage }},
		{name: "scheduling: node selector merged by key, tolerations and priority class replaced", cluster: eu1,
			overrides: []api.Override{{ClusterSelector: region("eu"), NodeSelector: map[string]string{"pool": "eu-batch"},
				Tolerations:       []api.Toleration{{Key: "eu-only", Operator: "Exists", Effect: "NoSchedule"}},
				PriorityClassName: "eu-low"}},
			edit: func(s *api.Spec) {
				s.NodeSelector = map[string]string{"disktype": "ssd", "pool": "eu-batch"}
				s.Tolerations = []api.Toleration{{Key: "eu-only", Operator: "Exists", Effect: "NoSchedule"}}
				s.PriorityClassName = "eu-low"
			}},
		{name: "a min above the base max, lowered by another override", cluster: eu1,
			overrides: []api.Override{
				{ClusterSelector: region("eu"), MinReplicas: ptr.To[int32](12)},
				{Clusters: []string{"eu-1"}, MaxReplicas: ptr.To[int32](20)},
			},
			edit: func(s *api.Spec) { s.Scaling.MinReplicas, s.Scaling.MaxReplicas = 12, 20 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := component(tt.overrides...)
			want := c.DeepCopy()
			want.Spec.Overrides = nil
			if tt.edit != nil {
				tt.edit(&want.Spec)
			}
			got, err := overrides.Resolve(c, tt.cluster)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("resolved component (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveReportsConflictsAndInvalidMerges(t *testing.T) {
	tests := []struct {
		name      string
		overrides []api.Override
		cluster   cluster.Identity
		want      []string // each line of the error, after the first
	}{
		{name: "two images for one cluster", cluster: eu1,
			overrides: []api.Override{{ClusterSelector: region("eu"), Image: euImage}, {Clusters: []string{"eu-1"}, Image: canary}},
			want: []string{`overrides for cluster "eu-1": spec.overrides[1].image: Invalid value: "` + canary +
				`": conflicts with spec.overrides[0].image ("` + euImage + `"): both overrides select cluster eu-1`}},
		{name: "every conflict at once: env, scaling, resources", cluster: eu1,
			overrides: []api.Override{
				{ClusterSelector: region("eu"), Env: []api.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}},
					MaxReplicas: ptr.To[int32](3),
					Resources:   &api.Resources{Limits: map[string]string{"memory": "1Gi"}}},
				{ClusterSelector: region("us"), Image: canary},
				{Clusters: []string{"eu-1"}, Env: []api.EnvVar{{Name: "MODE", Value: "x"}, {Name: "LOG_LEVEL", Value: "warn"}},
					MaxReplicas: ptr.To[int32](4),
					Resources:   &api.Resources{Limits: map[string]string{"memory": "2Gi"}}},
			},
			want: []string{
				`overrides for cluster "eu-1" (3 problems):`,
				`* spec.overrides[2].maxReplicas: Invalid value: "4": conflicts with spec.overrides[0].maxReplicas ("3"): both overrides select cluster eu-1`,
				`* spec.overrides[2].env[1]: Invalid value: "warn": conflicts with spec.overrides[0].env[0] ("debug"): both overrides select cluster eu-1`,
				`* spec.overrides[2].resources.limits[memory]: Invalid value: "2Gi": conflicts with spec.overrides[0].resources.limits[memory] ("1Gi"): both overrides select cluster eu-1`,
			}},
		{name: "two toleration lists for one cluster", cluster: eu1,
			overrides: []api.Override{
				{ClusterSelector: region("eu"), Tolerations: []api.Toleration{{Key: "gpu", Operator: "Exists", Effect: "NoSchedule"}}},
				{Clusters: []string{"eu-1"}, Tolerations: []api.Toleration{{Key: "spot", Value: "yes", Effect: "NoExecute", TolerationSeconds: ptr.To[int64](30)}}},
			},
			want: []string{`overrides for cluster "eu-1": spec.overrides[1].tolerations: Invalid value: "spot=yes:NoExecute for 30s": ` +
				`conflicts with spec.overrides[0].tolerations ("gpu:NoSchedule"): both overrides select cluster eu-1`}},
		{name: "a min above the base max", cluster: eu2,
			overrides: []api.Override{{ClusterSelector: region("eu"), MinReplicas: ptr.To[int32](12)}},
			want: []string{`overrides for cluster "eu-2": spec.overrides[0].minReplicas: Invalid value: 12: ` +
				`must be less than or equal to maxReplicas (10, from spec.scaling) on cluster eu-2`}},
		{name: "a max below the base min", cluster: eu2,
			overrides: []api.Override{{ClusterSelector: region("eu"), MaxReplicas: ptr.To[int32](1)}},
			want: []string{`overrides for cluster "eu-2": spec.overrides[0].maxReplicas: Invalid value: 1: ` +
				`must be greater than or equal to minReplicas (2, from spec.scaling) on cluster eu-2`}},
		{name: "limits crossed by two overrides", cluster: eu1,
			overrides: []api.Override{
				{ClusterSelector: region("eu"), MinReplicas: ptr.To[int32](5)},
				{Clusters: []string{"eu-1"}, MaxReplicas: ptr.To[int32](2)},
			},
			want: []string{`overrides for cluster "eu-1": spec.overrides[0].minReplicas: Invalid value: 5: ` +
				`must be less than or equal to maxReplicas (2, from spec.overrides[1].maxReplicas) on cluster eu-1`}},
		{name: "a limit below the base request", cluster: us1,
			overrides: []api.Override{{ClusterSelector: region("us"), Resources: &api.Resources{Limits: map[string]string{"cpu": "50m"}}}},
			want: []string{`overrides for cluster "us-1": spec.overrides[0].resources.limits[cpu]: Invalid value: "50m": ` +
				`must be greater than or equal to the cpu request (100m, from spec.resources.requests[cpu]) on cluster us-1`}},
		{name: "a request above the base limit", cluster: us1,
			overrides: []api.Override{{ClusterSelector: region("us"), Resources: &api.Resources{Requests: map[string]string{"memory": "1Gi"}}}},
			want: []string{`overrides for cluster "us-1": spec.overrides[0].resources.requests[memory]: Invalid value: "1Gi": ` +
				`must be less than or equal to the memory limit (256Mi, from spec.resources.limits[memory]) on cluster us-1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := component(tt.overrides...)
			_, err := overrides.Resolve(c, tt.cluster)
			if !errors.Is(err, api.ErrInvalid) {
				t.Fatalf("Resolve error %v does not match api.ErrInvalid", err)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveLeavesItsInputAlone(t *testing.T) {
	c := component(api.Override{ClusterSelector: region("eu"),
		Env: []api.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}, Resources: &api.Resources{Limits: map[string]string{"memory": "1Gi"}}})
	before := c.DeepCopy()
	if _, err := overrides.Resolve(c, eu1); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, c); diff != "" {
		t.Errorf("Resolve changed its input (-before +after):\n%s", diff)
	}
}

func TestSelects(t *testing.T) {
	tests := []struct {
		name string
		o    api.Override
		want bool
	}{
		{"named", api.Override{Clusters: []string{"us-1", "eu-1"}}, true},
		{"not named", api.Override{Clusters: []string{"us-1"}}, false},
		{"labels match", api.Override{ClusterSelector: region("eu")}, true},
		{"an expression matches", api.Override{ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold", "silver"}}}}}, true},
		{"named but labels differ", api.Override{Clusters: []string{"eu-1"}, ClusterSelector: region("us")}, false},
		{"selects nothing", api.Override{}, false},
		{"an empty selector selects every cluster", api.Override{ClusterSelector: &metav1.LabelSelector{}}, true},
		{"a selector that does not parse selects nothing", api.Override{ClusterSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}}, false},
	}
	for _, tt := range tests {
		if got := eu1.SelectedBy(tt.o); got != tt.want {
			t.Errorf("%s: Selects = %v, want %v", tt.name, got, tt.want)
		}
	}
}
