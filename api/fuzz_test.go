package api

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeValidate feeds arbitrary documents through the publish path:
// Decode, Default, Validate, Warnings and Canonical must never panic,
// Default must be idempotent, and a decoded component must survive the
// Canonical → Decode round trip byte for byte.
func FuzzDecodeValidate(f *testing.F) {
	for _, data := range exampleFiles(f) {
		f.Add(data)
	}
	f.Add([]byte(minimalYAML))
	f.Add([]byte(minimalYAML + "  egress: {allow: [{cidr: 10.0.0.0/8, except: [10.1.0.0/16], ports: [{port: 443, protocol: UDP}]}]}\n"))
	f.Add([]byte(minimalYAML + "  egress: allow\n  replicas: 0\n  scaling: {maxReplicas: 2}\n"))
	f.Add([]byte(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"x"},"spec":{"image":"a:1","jobs":{"subjects":["a.>","a.*"]}}}`))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		if err != nil {
			return
		}
		d := Default(c)
		if diff := cmp.Diff(d, Default(d)); diff != "" {
			t.Fatalf("Default is not idempotent:\n%s", diff)
		}
		_ = ValidationError(Validate(d))
		_ = Warnings(d)
		first, err := Canonical(d)
		if err != nil {
			t.Fatalf("Canonical: %v", err)
		}
		again, err := Decode(first)
		if err != nil {
			t.Fatalf("Decode(Canonical) failed: %v\n%s", err, first)
		}
		second, err := Canonical(Default(again))
		if err != nil {
			t.Fatalf("Canonical after round trip: %v", err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("round trip changed the encoding:\n%s\n%s", first, second)
		}
	})
}
