package render_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tinyctl/tinyctl/render"
)

// TestNamesAreInjective checks that components whose namespace/name pairs
// could be confused when joined still get distinct streams, consumers and
// component labels.
func TestNamesAreInjective(t *testing.T) {
	pairs := [][2]string{
		{"a-b", "c"}, {"a", "b-c"}, {"ab", "c"}, {"a", "bc"},
		{"workers", "extractor"}, {"workers-extractor", "x"},
		{strings.Repeat("n", 63), strings.Repeat("m", 63)},
		{strings.Repeat("n", 63), strings.Repeat("m", 62) + "k"},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		for kind, name := range map[string]string{
			"stream":   render.StreamName(p[0], p[1]),
			"consumer": render.ConsumerName(p[0], p[1]),
			"label":    render.ComponentLabelValue(p[0], p[1]),
		} {
			k := kind + "=" + name
			if other, dup := seen[k]; dup {
				t.Errorf("%s %q shared by %v and %v", kind, name, other, p)
			}
			seen[k] = p
		}
	}
}

// TestNamesAreValid checks that derived names are accepted where they are
// used: label values by Kubernetes, stream and consumer names by JetStream.
func TestNamesAreValid(t *testing.T) {
	tests := map[string][2]string{
		"short":            {"workers", "extractor"},
		"longest labels":   {strings.Repeat("n", 63), strings.Repeat("m", 63)},
		"cut at a dash":    {strings.Repeat("n", 51) + "-x", strings.Repeat("m", 40)},
		"exactly 63 chars": {strings.Repeat("n", 31), strings.Repeat("m", 31)},
	}
	for name, p := range tests {
		t.Run(name, func(t *testing.T) {
			v := render.ComponentLabelValue(p[0], p[1])
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("ComponentLabelValue = %q: %v", v, errs)
			}
			for _, js := range []string{render.StreamName(p[0], p[1]), render.ConsumerName(p[0], p[1])} {
				if strings.ContainsAny(js, " \t\r\n\f.*>\\/") {
					t.Errorf("JetStream name %q holds a character nats-server refuses", js)
				}
			}
		})
	}
	if got := render.ComponentLabelValue("workers", "extractor"); got != "workers.extractor" {
		t.Errorf("short label value = %q, want the spec-bucket key", got)
	}
}
