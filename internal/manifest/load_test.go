package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/internal/manifest"
)

const valid = `apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: resizer, namespace: media}
spec:
  image: acme/resizer:1.0.0
  jobs: {subjects: [media.resize.>]}
`

func problems(set manifest.Set) []string {
	var out []string
	for _, p := range set.Problems {
		out = append(out, p.String())
	}
	return out
}

func TestLoadReportsEveryProblemWithFileDocumentLineAndPath(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "unknown field is split into path and message",
			src:  strings.Replace(valid, "jobs: {", "jobs: {subject: x, ", 1),
			want: []string{"a.yaml: document 1 (line 1): spec.jobs.subject: unknown field"},
		},
		{
			name: "an unknown field does not hide the validation problems of the same document",
			src:  strings.Replace(strings.Replace(valid, "jobs: {", "jobs: {subject: x, ", 1), "acme/resizer:1.0.0", "acme/resizer", 1),
			want: []string{
				"a.yaml: document 1 (line 1): spec.jobs.subject: unknown field",
				`a.yaml: document 1 (line 1): spec.image: Invalid value: "acme/resizer": pin a tag or digest, e.g. worker:1.2.3 or worker@sha256:<64 hex digits>`,
			},
		},
		{
			name: "validation problems of several documents, each with its starting line",
			src: valid + "---\n# second\n" + strings.Replace(valid, "acme/resizer:1.0.0", "acme/resizer", 1) +
				"---\n" + strings.Replace(valid, "name: resizer", "name: Resizer", 1),
			want: []string{
				`a.yaml: document 2 (line 9): spec.image: Invalid value: "acme/resizer": pin a tag or digest, e.g. worker:1.2.3 or worker@sha256:<64 hex digits>`,
				`a.yaml: document 3 (line 16): metadata.name: Invalid value: "Resizer": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
			},
		},
		{
			name: "yaml syntax errors point at lines of the file",
			src:  valid + "---\n" + valid + "  image: acme/other:1.0.0\n",
			want: []string{`a.yaml: document 2 (line 8): yaml: unmarshal errors: line 14: key "image" already set in map`},
		},
		{
			name: "the same component twice",
			src:  valid + "---\n" + valid,
			want: []string{`a.yaml: document 2 (line 8): metadata.name: Duplicate value: "media.resizer": also in a.yaml document 1`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := manifest.Load([]manifest.Source{manifest.Bytes("a.yaml", []byte(tt.src))}, manifest.Options{})
			if diff := cmp.Diff(tt.want, problems(set)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if set.Components != nil {
				t.Errorf("got %d components alongside problems, want none", len(set.Components))
			}
		})
	}
}

func TestLoadReturnsDefaultedCanonicalComponentsAndWarnings(t *testing.T) {
	src := strings.Replace(valid, "1.0.0", "latest", 1)
	set := manifest.Load([]manifest.Source{manifest.Bytes("a.yaml", []byte(src))}, manifest.Options{})
	if len(set.Problems) != 0 || len(set.Components) != 1 {
		t.Fatalf("problems %v, %d components; want none and 1", set.Problems, len(set.Components))
	}
	c := set.Components[0]
	if c.Key != "media.resizer" || !strings.Contains(string(c.Canonical), `"maxAckPending":1000`) {
		t.Errorf("key %q canonical %s: want media.resizer, defaulted", c.Key, c.Canonical)
	}
	if len(set.Warnings) != 1 || !strings.HasPrefix(set.Warnings[0].String(), "a.yaml: document 1 (line 1): spec.image:") {
		t.Errorf("warnings = %v, want one about spec.image", set.Warnings)
	}
}

func TestLoadNamespaceOption(t *testing.T) {
	noNS := strings.Replace(valid, ", namespace: media", "", 1)
	tests := []struct {
		name, src, ns string
		wantKey       string
		wantProblem   string
	}{
		{"no -n: default namespace", noNS, "", "default.resizer", ""},
		{"-n fills a missing namespace", noNS, "media", "media.resizer", ""},
		{"-n equal to the document's", valid, "media", "media.resizer", ""},
		{"-n differing from the document's", valid, "other", "",
			`a.yaml: document 1 (line 1): metadata.namespace: Invalid value: "media": does not match the namespace "other" given with --namespace`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Subjects are not this test's business: the document moves
			// between namespaces.
			opts := manifest.Options{Namespace: tt.ns, Tenancy: validate.Tenancy{Off: true}}
			set := manifest.Load([]manifest.Source{manifest.Bytes("a.yaml", []byte(tt.src))}, opts)
			if tt.wantProblem != "" {
				if diff := cmp.Diff([]string{tt.wantProblem}, problems(set)); diff != "" {
					t.Errorf("problems (-want +got):\n%s", diff)
				}
				return
			}
			if len(set.Components) != 1 || set.Components[0].Key != tt.wantKey {
				t.Errorf("components %+v problems %v, want key %s", set.Components, set.Problems, tt.wantKey)
			}
		})
	}
}

func TestLoadScopesSubjectsToTheNamespace(t *testing.T) {
	foreign := strings.Replace(valid, "media.resize.>", "billing.invoices.>", 1)
	set := manifest.Load([]manifest.Source{manifest.Bytes("a.yaml", []byte(foreign))}, manifest.Options{})
	want := []string{`a.yaml: document 1 (line 1): spec.jobs.subjects[0]: Forbidden: "billing.invoices.>" is outside the subjects namespace media may use (media.>)`}
	if diff := cmp.Diff(want, problems(set)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	opts := manifest.Options{Tenancy: validate.Tenancy{Prefixes: map[string][]string{"media": {"billing.invoices.>"}}}}
	if set := manifest.Load([]manifest.Source{manifest.Bytes("a.yaml", []byte(foreign))}, opts); len(set.Problems) != 0 {
		t.Errorf("a cluster that lets media use billing.invoices.> refused it: %v", set.Problems)
	}
}

func TestLoadCapsEachDocumentNotTheSource(t *testing.T) {
	big := valid + "# " + strings.Repeat("x", 300<<10) + "\n"
	var many strings.Builder
	for i := range 2000 { // about 400 KiB of small documents
		fmt.Fprintf(&many, "---\n%s", strings.Replace(valid, "name: resizer", fmt.Sprintf("name: w%d", i), 1))
	}
	set := manifest.Load([]manifest.Source{manifest.Bytes("many.yaml", []byte(many.String()))}, manifest.Options{})
	if len(set.Problems) != 0 || len(set.Components) != 2000 {
		t.Fatalf("%d components, problems %v; want 2000 and none", len(set.Components), problems(set))
	}
	set = manifest.Load([]manifest.Source{
		manifest.Bytes("many.yaml", []byte(many.String())),
		manifest.Bytes("big.yaml", []byte(valid+"---\n"+big)),
	}, manifest.Options{})
	want := []string{"big.yaml: document 2 (line 8): document is larger than 256 KiB (the limit is per document, not per file)"}
	if diff := cmp.Diff(want, problems(set)); diff != "" || set.Components != nil {
		t.Errorf("problems (-want +got):\n%s\ncomponents: %d, want none", diff, len(set.Components))
	}
}
