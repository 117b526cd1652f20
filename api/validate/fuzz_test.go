package validate_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/apitest"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/validate"
)

// FuzzDecodeValidate feeds arbitrary documents through the publish path:
// Decode, Default, Validate, Warnings and api.Canonical must never panic,
// Default must be idempotent, and a decoded component must survive the
// api.Canonical → Decode round trip byte for byte.
func FuzzDecodeValidate(f *testing.F) {
	for _, data := range apitest.ExampleFiles(f) {
		f.Add(data)
	}
	f.Add([]byte(apitest.MinimalYAML))
	f.Add([]byte(apitest.MinimalYAML + "  egress: {allow: [{cidr: 10.0.0.0/8, except: [10.1.0.0/16], ports: [{port: 443, protocol: UDP}]}]}\n"))
	f.Add([]byte(apitest.MinimalYAML + "  egress: allow\n  replicas: 0\n  scaling: {maxReplicas: 2}\n"))
	f.Add([]byte(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"x"},"spec":{"image":"a:1","jobs":{"subjects":["a.>","a.*"]}}}`))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decode.Component(data)
		if err != nil {
			return
		}
		d := defaults.Apply(c)
		if diff := cmp.Diff(d, defaults.Apply(d)); diff != "" {
			t.Fatalf("Default is not idempotent:\n%s", diff)
		}
		_ = validate.AsError(validate.Component(d))
		_ = validate.Warnings(d)
		first, err := api.Canonical(d)
		if err != nil {
			t.Fatalf("Canonical: %v", err)
		}
		again, err := decode.Component(first)
		if err != nil {
			t.Fatalf("Decode(Canonical) failed: %v\n%s", err, first)
		}
		second, err := api.Canonical(defaults.Apply(again))
		if err != nil {
			t.Fatalf("Canonical after round trip: %v", err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("round trip changed the encoding:\n%s\n%s", first, second)
		}
	})
}
