package validate

import (
	"slices"
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api"
)

// TestEgressReachRefusesMetadataAndClusterRanges: an allow list may not
// name the metadata ranges, or the cluster's ranges when it has them, in
// a block or around one, unless except removes them or the operator
// allows it; each refusal names the rule's field path.
func TestEgressReachRefusesMetadataAndClusterRanges(t *testing.T) {
	allow := func(rules ...api.EgressRule) api.Component {
		c := validComponent()
		c.Spec.Egress = api.Egress{Mode: api.EgressAllow, Allow: rules}
		return c
	}
	cluster := EgressReach{ClusterCIDRs: []string{"10.244.0.0/16", "10.96.0.0/12"}}
	for _, tc := range []struct {
		name  string
		reach EgressReach
		c     api.Component
		want  []string // field paths, in order
	}{
		{"the metadata endpoint", EgressReach{}, allow(api.EgressRule{CIDR: "169.254.169.254/32"}), []string{"spec.egress.allow[0].cidr"}},
		{"everything", EgressReach{}, allow(api.EgressRule{CIDR: "10.0.0.0/24"}, api.EgressRule{CIDR: "0.0.0.0/0"}), []string{"spec.egress.allow[1].cidr"}},
		{"everything but link-local", EgressReach{}, allow(api.EgressRule{CIDR: "0.0.0.0/0", Except: []string{"169.254.0.0/16"}}), nil},
		{"an except too narrow", EgressReach{}, allow(api.EgressRule{CIDR: "0.0.0.0/0", Except: []string{"169.254.169.254/32"}}), []string{"spec.egress.allow[0].cidr"}},
		{"IPv6 everything", EgressReach{}, allow(api.EgressRule{CIDR: "::/0"}), []string{"spec.egress.allow[0].cidr", "spec.egress.allow[0].cidr"}},
		{"metadata allowed by the operator", EgressReach{Metadata: true}, allow(api.EgressRule{CIDR: "169.254.169.254/32"}), nil},
		{"a pod range", cluster, allow(api.EgressRule{CIDR: "10.244.3.7/32"}), []string{"spec.egress.allow[0].cidr"}},
		{"around both cluster ranges", cluster, allow(api.EgressRule{CIDR: "10.0.0.0/8"}), []string{"spec.egress.allow[0].cidr", "spec.egress.allow[0].cidr"}},
		{"around them, excepted", cluster, allow(api.EgressRule{CIDR: "10.0.0.0/8", Except: []string{"10.96.0.0/12", "10.244.0.0/16"}}), nil},
		{"beside them", cluster, allow(api.EgressRule{CIDR: "10.128.0.0/16"}), nil},
		{"pods by label", cluster, allow(api.EgressRule{Namespace: "billing"}), nil},
		{"internet", cluster, func() api.Component {
			c := validComponent()
			c.Spec.Egress = api.Egress{Mode: api.EgressInternet}
			return c
		}(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.reach.Egress(tc.c)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
				if !strings.Contains(e.Detail, " reaches ") {
					t.Errorf("detail %q does not say what the rule reaches", e.Detail)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("refused %v, want %v (%v)", got, tc.want, errs)
			}
		})
	}
}

// TestCheckRefusesTheMetadataRangeByDefault: the zero Tenancy (what apply
// checks against without a cluster's heartbeat) refuses it too.
func TestCheckRefusesTheMetadataRangeByDefault(t *testing.T) {
	c := validComponent()
	c.Spec.Egress = api.Egress{Mode: api.EgressAllow, Allow: []api.EgressRule{{CIDR: "169.254.169.254/32", Ports: []api.Port{{Port: 80}}}}}
	_, err := Check(c, Tenancy{})
	if err == nil || !strings.Contains(err.Error(), `spec.egress.allow[0].cidr: Forbidden: 169.254.169.254/32 reaches 169.254.0.0/16`) {
		t.Errorf("Check: %v", err)
	}
}
