package api_test

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/apitest"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/defaults"
)

func TestCanonicalFormat(t *testing.T) {
	c, err := decode.Component([]byte(apitest.MinimalYAML))
	if err != nil {
		t.Fatal(err)
	}
	got, err := api.Canonical(defaults.Apply(c))
	if err != nil {
		t.Fatal(err)
	}
	// This is the stored KV format: changing it changes a public contract.
	want := `{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"extractor","namespace":"workers"},` +
		`"spec":{"image":"registry.example.com/acme/extractor:1.4.2","jobs":{"subjects":["jobs.extract.>"],` +
		`"stream":{"storage":"file","maxAge":"24h","duplicateWindow":"2m"},` +
		`"consumer":{"ackWait":"30s","maxDeliver":5,"maxAckPending":1000}},"replicas":1,"egress":"none","deletion":{"stream":"Retain"}}}`
	if string(got) != want {
		t.Errorf("Canonical =\n%s\nwant\n%s", got, want)
	}
}

func TestCanonicalRoundTrips(t *testing.T) {
	for name, data := range apitest.ExampleFiles(t) {
		t.Run(name, func(t *testing.T) {
			c, err := decode.Component(data)
			if err != nil {
				t.Fatal(err)
			}
			first, err := api.Canonical(defaults.Apply(c))
			if err != nil {
				t.Fatal(err)
			}
			again, err := decode.Component(first)
			if err != nil {
				t.Fatalf("Decode(Canonical): %v\n%s", err, first)
			}
			second, err := api.Canonical(defaults.Apply(again))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first, second) {
				t.Errorf("decode → canonical is not stable:\n%s\n%s", first, second)
			}
		})
	}
}

func TestCanonicalIgnoresInputOrder(t *testing.T) {
	a := `apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: x, labels: {b: "2", a: "1", c: "3"}}
spec:
  image: acme/x:1
  resources: {requests: {memory: 64Mi, cpu: 10m}}
  jobs: {subjects: [jobs.x], consumer: {maxDeliver: 3, ackWait: 1m}}
  egress: {allow: [{podLabels: {z: "1", y: "2"}, namespace: other}]}
`
	b := `kind: Component
spec:
  egress:
    allow:
    - namespace: other
      podLabels: {y: "2", z: "1"}
  jobs: {consumer: {ackWait: 1m, maxDeliver: 3}, subjects: [jobs.x]}
  resources: {requests: {cpu: 10m, memory: 64Mi}}
  image: acme/x:1
metadata: {labels: {c: "3", a: "1", b: "2"}, name: x}
apiVersion: tinyctl.io/v1alpha1
`
	ca, cb := mustCanonical(t, a), mustCanonical(t, b)
	if !bytes.Equal(ca, cb) {
		t.Errorf("same content, different bytes:\n%s\n%s", ca, cb)
	}
	if api.Hash(mustDecode(t, a)) != api.Hash(mustDecode(t, b)) {
		t.Error("same content, different hashes")
	}
}

func TestCanonicalTreatsEmptyOptionalBlocksAsAbsent(t *testing.T) {
	bare := mustCanonical(t, apitest.MinimalYAML)
	withEmpty := mustCanonical(t, apitest.MinimalYAML+"  resources: {}\n  placement: {}\n")
	if !bytes.Equal(bare, withEmpty) {
		t.Errorf("empty resources/placement changed the encoding:\n%s\n%s", bare, withEmpty)
	}
}

func TestCanonicalTreatsEmptyOverrideBlocksAsAbsent(t *testing.T) {
	const override = "  overrides:\n  - clusters: [eu-1]\n    image: registry.example.com/acme/extractor:1.4.3\n"
	bare := mustCanonical(t, apitest.MinimalYAML+override)
	withEmpty := mustCanonical(t, apitest.MinimalYAML+override+"    resources: {}\n    env: []\n")
	if !bytes.Equal(bare, withEmpty) {
		t.Errorf("an override's empty resources/env changed the encoding:\n%s\n%s", bare, withEmpty)
	}
	if !bytes.Contains(bare, []byte(`"egress":"none","overrides":[{"clusters":["eu-1"],"image":"registry.example.com/acme/extractor:1.4.3"}],"deletion"`)) {
		t.Errorf("overrides are not encoded between egress/placement and deletion:\n%s", bare)
	}
}

func TestHash(t *testing.T) {
	c := mustDecode(t, apitest.MinimalYAML)
	h := api.Hash(c)
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(h) {
		t.Errorf("Hash = %q, want 16 hex digits", h)
	}
	if api.Hash(c) != h {
		t.Error("Hash is not deterministic")
	}
	c.Spec.Image = "registry.example.com/acme/extractor:1.4.3"
	if api.Hash(c) == h {
		t.Error("changing the image did not change the hash")
	}
}

func mustDecode(t *testing.T, s string) api.Component {
	t.Helper()
	c, err := decode.Component([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCanonical(t *testing.T, s string) []byte {
	t.Helper()
	b, err := api.Canonical(defaults.Apply(mustDecode(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
