package provision_test

import (
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/provision"
)

func TestSanitizeResourceName(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := []struct {
		name, in, want string
	}{
		{"slash becomes a dash", "tinysystems/http-module-v0", "tinysystems-http-module-v0"},
		{"valid name unchanged", "keda", "keda"},
		{"upper case lowered", "KEDA-Operator", "keda-operator"},
		{"runs of invalid characters become one dash", "a__b..c  d", "a-b-c-d"},
		{"no dash doubled next to an existing one", "a/-b", "a-b"},
		{"leading and trailing junk trimmed", "/_oci/chart_", "oci-chart"},
		{"capped at 53 characters", long, long[:53]},
		{"no trailing dash after the cap", strings.Repeat("a", 52) + "/b", strings.Repeat("a", 52)},
		{"nothing usable", "/_.", ""},
		{"non-ASCII letters dropped", "zürich/v1", "z-rich-v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := provision.SanitizeResourceName(tt.in)
			if got != tt.want {
				t.Errorf("SanitizeResourceName(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if len(got) > provision.MaxReleaseName {
				t.Errorf("%q is %d characters, over %d", got, len(got), provision.MaxReleaseName)
			}
		})
	}
}
