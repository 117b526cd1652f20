package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/apitest"
)

const minimalYAML = apitest.MinimalYAML

func TestDecodeReportsProblemsWithPaths(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string // substrings of the error
	}{
		{"unknown field", minimalYAML + "  imagePullPolicy: Always\n", []string{`unknown field "spec.imagePullPolicy"`}},
		{"every unknown field", strings.Replace(minimalYAML, "kind: Component", "kind: Component\nstatus: {}\nversion: 2", 1) + "  jobs2: {}\n",
			[]string{`unknown field "status"`, `unknown field "version"`, `unknown field "spec.jobs2"`}},
		{"nested unknown field", strings.Replace(minimalYAML, `jobs: {subjects: ["jobs.extract.>"]}`,
			`jobs: {subjects: ["jobs.extract.>"], consumer: {ackwait: 30s}}`, 1), []string{`unknown field "spec.jobs.consumer.ackwait"`}},
		{"unknown field in an override", minimalYAML + "  overrides:\n  - clusters: [eu-1]\n    image: acme/x:1\n  - clusters: [us-1]\n    scaling: {maxReplicas: 3}\n",
			[]string{`unknown field "spec.overrides[1].scaling"`}},
		{"field names are case-sensitive", strings.Replace(minimalYAML, "image:", "Image:", 1), []string{`unknown field "spec.Image"`}},
		{"duplicate key", minimalYAML + "  image: other:1\n", []string{`"image" already set in map`}},
		{"wrong type", minimalYAML + "  replicas: three\n", []string{"spec.replicas: must be an integer, not a string"}},
		{"unquoted number as env value", minimalYAML + "  env: [{name: PORT, value: 8080}]\n", []string{"spec.env[0].value: must be a string, not a number"}},
		{"wrong type in an egress rule", minimalYAML + "  egress: {allow: [{cidr: 10.0.0.0/8, ports: [{port: https}]}]}\n",
			[]string{"spec.egress.allow[0].ports[0].port: must be an integer, not a string"}},
		{"unknown field in an egress rule", minimalYAML + "  egress: {allow: [{cidr: 10.0.0.0/8, port: 443}]}\n",
			[]string{`unknown field "spec.egress.allow[0].port"`}},
		{"unknown egress object field", minimalYAML + "  egress: {deny: []}\n", []string{`unknown field "spec.egress.deny"`}},
		{"egress neither word nor object", minimalYAML + "  egress: [none]\n", []string{"spec.egress: must be one of"}},
		{"YAML syntax error", "metadata: {name: x\n", []string{"yaml:"}},
		{"empty document", "# nothing here\n", []string{"document is empty"}},
		{"not an object", "- a\n- b\n", []string{"the document: must be an object, not a list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Component([]byte(tt.input))
			if err == nil {
				t.Fatal("Decode succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !errors.Is(err, api.ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
		})
	}
}

// TestDecodeReportsEveryProblemTogether mixes the kinds of mistake that
// used to hide one another: the JSON decoder stops at the first wrong type
// or unreadable egress and forgets the unknown fields it had found.
func TestDecodeReportsEveryProblemTogether(t *testing.T) {
	tests := []struct {
		name, input string
		want        []string // every problem, in key order (YAML becomes JSON with sorted keys)
	}{
		{"wrong types and unknown fields", minimalYAML +
			"  replicas: three\n  color: 1\n  env: [{name: A, value: '1'}, {name: B, value: 2, from: x}]\n  scaling: {maxReplicas: many}\n",
			[]string{`unknown field "spec.color"`, `unknown field "spec.env[1].from"`,
				"spec.env[1].value: must be a string, not a number", "spec.replicas: must be an integer, not a string",
				"spec.scaling.maxReplicas: must be an integer, not a string"}},
		{"an egress that is not a word or an object", minimalYAML + "  egress: [none]\n  colour: red\n",
			[]string{`unknown field "spec.colour"`, "spec.egress: must be one of"}},
		{"an unknown field in the egress and elsewhere", minimalYAML + "  egress: {deny: []}\n  colour: red\n",
			[]string{`unknown field "spec.colour"`, `unknown field "spec.egress.deny"`}},
		{"wrong types in two egress rules", minimalYAML +
			"  egress: {allow: [{cidr: 10.0.0.0/8, ports: [{port: https}]}, {cidr: 1, mask: 8}]}\n",
			[]string{"spec.egress.allow[0].ports[0].port: must be an integer, not a string",
				"spec.egress.allow[1].cidr: must be a string, not a number", `unknown field "spec.egress.allow[1].mask"`}},
		{"a wrong type in metadata beside an unknown top-level field",
			strings.Replace(minimalYAML, "metadata: {name: extractor,", "status: {}\nmetadata: {name: 7,", 1),
			[]string{"metadata.name: must be a string, not a number", `unknown field "status"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Component([]byte(tt.input))
			var de *Error
			if !errors.As(err, &de) {
				t.Fatalf("Decode error = %v, want a *decode.Error", err)
			}
			if len(de.Errs) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(de.Errs), len(tt.want), err)
			}
			for i, w := range tt.want {
				if !strings.Contains(de.Errs[i].Error(), w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, de.Errs[i], w)
				}
				// An unknown field has the strict decoder's form, path and all,
				// as on the fast path (tinyctl apply prints "path: unknown field").
				var fe sigsjson.FieldError
				if strings.HasPrefix(w, "unknown field") && (!errors.As(de.Errs[i], &fe) || strconv.Quote(fe.FieldPath()) != strings.TrimPrefix(w, "unknown field ")) {
					t.Errorf("problem %d = %#v, want a field error with the path of %s", i, de.Errs[i], w)
				}
			}
		})
	}
}

func TestDecodeEgressShapes(t *testing.T) {
	tests := []struct {
		yaml string
		want api.Egress
	}{
		{"", api.Egress{}},
		{"  egress: null\n", api.Egress{}},
		{"  egress: none\n", api.Egress{Mode: api.EgressNone}},
		{"  egress: internet\n", api.Egress{Mode: api.EgressInternet}},
		{"  egress: sideways\n", api.Egress{Mode: "sideways"}}, // kept for Validate to name
		{"  egress: {allow: [{cidr: 10.0.0.0/8, ports: [{port: 443}]}]}\n",
			api.Egress{Mode: api.EgressAllow, Allow: []api.EgressRule{{CIDR: "10.0.0.0/8", Ports: []api.Port{{Port: 443}}}}}},
		{"  egress:\n    allow:\n    - namespace: search\n      podLabels: {app: opensearch}\n",
			api.Egress{Mode: api.EgressAllow, Allow: []api.EgressRule{{Namespace: "search", PodLabels: map[string]string{"app": "opensearch"}}}}},
	}
	for _, tt := range tests {
		c, err := Component([]byte(minimalYAML + tt.yaml))
		if err != nil {
			t.Fatalf("Decode(%q): %v", tt.yaml, err)
		}
		if diff := cmp.Diff(tt.want, c.Spec.Egress); diff != "" {
			t.Errorf("Decode(%q) egress (-want +got):\n%s", tt.yaml, diff)
		}
	}
}

func TestDecodeAcceptsJSON(t *testing.T) {
	in := `{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"extractor"},
	"spec":{"image":"acme/extractor:1","jobs":{"subjects":["jobs.>"]},"egress":{"allow":[{"cidr":"10.0.0.0/8"}]}}}`
	c, err := Component([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Name != "extractor" || c.Spec.Egress.Mode != api.EgressAllow || c.Spec.Jobs.Subjects[0] != "jobs.>" {
		t.Errorf("decoded %+v", c)
	}
	if _, err := Component([]byte(`{"apiVersion":"tinyctl.io/v1alpha1","spek":{}}`)); err == nil || !strings.Contains(err.Error(), `unknown field "spek"`) {
		t.Errorf("unknown JSON field: got %v", err)
	}
}

// countingReader is an endless stream of spaces that counts what was read.
type countingReader struct{ n int }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	r.n += len(p)
	return len(p), nil
}

func TestDecodeRefusesOversizedInput(t *testing.T) {
	padded := func(size int) []byte {
		b := []byte(minimalYAML)
		return append(b, bytes.Repeat([]byte("#"), size-len(b))...)
	}
	if _, err := Component(padded(MaxSize)); err != nil {
		t.Errorf("Decode of exactly MaxSize bytes: %v", err)
	}
	if _, err := Component(padded(MaxSize + 1)); !errors.Is(err, ErrTooLarge) || !errors.Is(err, api.ErrInvalid) {
		t.Errorf("Decode of MaxSize+1 bytes = %v, want ErrTooLarge", err)
	}
	r := &countingReader{}
	_, err := Reader(r)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("DecodeReader(endless) = %v, want ErrTooLarge", err)
	}
	if want := "decode component: input is larger than 256 KiB"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if r.n > 2*MaxSize {
		t.Errorf("DecodeReader read %d bytes of an endless stream, want about %d", r.n, MaxSize+1)
	}
}

// TestDecoderCapsEachDocumentNotTheStream reads a stream far larger than
// MaxSize made of small documents, with one oversized document (a comment
// line longer than the read buffer, then more content) among them: that
// one alone is refused, with its index and line, and the stream goes on.
func TestDecoderCapsEachDocumentNotTheStream(t *testing.T) {
	var b strings.Builder
	const n = 3000
	for i := range n {
		if i == 1000 {
			b.WriteString("---\n# " + strings.Repeat("x", MaxSize) + "\n" + minimalYAML)
			continue
		}
		fmt.Fprintf(&b, "---\n%s", strings.Replace(minimalYAML, "extractor,", fmt.Sprintf("w%d,", i), 1))
	}
	if b.Len() < 2*MaxSize {
		t.Fatalf("stream of %d bytes, want one well over MaxSize", b.Len())
	}
	dec := NewDecoder(strings.NewReader(b.String()))
	lines := strings.Count(minimalYAML, "\n") + 1
	for i := range n {
		d, err := dec.Next()
		if err != nil || d.Index != i {
			t.Fatalf("document %d: index %d, %v", i, d.Index, err)
		}
		want := i*lines + 1
		if i > 1000 {
			want++ // the oversized document's extra line
		}
		if d.Start != want {
			t.Fatalf("document %d starts on line %d, want %d", i, d.Start, want)
		}
		if i != 1000 {
			if d.Err != nil || d.Component.Metadata.Name != fmt.Sprintf("w%d", i) {
				t.Fatalf("document %d: %q, %v", i, d.Component.Metadata.Name, d.Err)
			}
			continue
		}
		if !errors.Is(d.Err, ErrTooLarge) || !errors.Is(d.Err, api.ErrInvalid) || d.Line != d.Start+2 {
			t.Errorf("oversized document: line %d, err %v; want ErrTooLarge on line %d", d.Line, d.Err, d.Start+2)
		}
		if want := "decode component: document is larger than 256 KiB"; d.Err == nil || !strings.HasPrefix(d.Err.Error(), want) {
			t.Errorf("oversized document: %v, want %q", d.Err, want)
		}
	}
	if _, err := dec.Next(); err != io.EOF {
		t.Errorf("after the last document: %v, want io.EOF", err)
	}
}

// TestDecoderOversizedDocumentThenReadError: a document of a megabyte of
// blanks (one line, longer than the read buffer) is refused and the next
// one decoded; a read error fails All.
func TestDecoderOversizedDocumentThenReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(io.LimitReader(&countingReader{}, 4*MaxSize), strings.NewReader("\n---\n"+minimalYAML), errReader{boom})
	docs, err := All(r)
	if !errors.Is(err, boom) || docs != nil {
		t.Errorf("All = %d documents, %v; want none and the read error", len(docs), err)
	}
	dec := NewDecoder(io.MultiReader(strings.NewReader("kind: x\n"), io.LimitReader(&countingReader{}, 4*MaxSize), strings.NewReader("\n---\n"+minimalYAML)))
	d, err := dec.Next()
	if err != nil || !errors.Is(d.Err, ErrTooLarge) {
		t.Errorf("first document: %v, %v; want ErrTooLarge", d.Err, err)
	}
	if d, err = dec.Next(); err != nil || d.Err != nil || d.Index != 1 || d.Line != 4 {
		t.Errorf("second document: index %d line %d, %v, %v; want index 1 on line 4, decoded", d.Index, d.Line, d.Err, err)
	}
}

func TestDecodeReaderPassesReadErrorsThrough(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := Reader(io.MultiReader(strings.NewReader("apiVersion: x\n"), errReader{boom}))
	if !errors.Is(err, boom) || errors.Is(err, api.ErrInvalid) {
		t.Errorf("DecodeReader = %v, want the read error and not ErrInvalid", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestDecodeAllKeepsGoingPastABadDocument(t *testing.T) {
	stream := "# leading comment\n---\n" + minimalYAML +
		"---\n# only a comment\n---\n" +
		strings.Replace(minimalYAML, "extractor,", "resizer,", 1) + "  scale: 3\n" +
		"--- # third\n" +
		strings.Replace(minimalYAML, "extractor,", "indexer,", 1) +
		"...\n"
	docs, err := All(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Index, Line int
		Name        string
		Err         string
	}
	var got []summary
	for _, d := range docs {
		s := summary{Index: d.Index, Line: d.Line, Name: d.Component.Metadata.Name}
		if d.Err != nil {
			s.Err = d.Err.Error()
		}
		got = append(got, s)
	}
	want := []summary{
		{Index: 0, Line: 3, Name: "extractor"},
		{Index: 1, Line: 12, Err: `decode component: unknown field "spec.scale"`},
		{Index: 2, Line: 20, Name: "indexer"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
}

func TestDecodeAllOfNothing(t *testing.T) {
	docs, err := All(strings.NewReader("---\n# empty\n---\n"))
	if err != nil || len(docs) != 0 {
		t.Errorf("DecodeAll(empty stream) = %v, %v; want no documents and no error", docs, err)
	}
}

// JSON takes a shorter path than YAML when it decodes cleanly; either way
// the example manifests decode to the same component, and a JSON document
// with a problem gets the error its YAML form gets.
func TestJSONAndYAMLDecodeAlike(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v, %d files", err, len(files))
	}
	for _, f := range files {
		y, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatal(err)
		}
		fromYAML, err1 := Component(y)
		fromJSON, err2 := Component(j)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v, %v", f, err1, err2)
		}
		if d := cmp.Diff(fromYAML, fromJSON); d != "" {
			t.Errorf("%s: JSON decodes otherwise (-yaml +json):\n%s", f, d)
		}
	}
	spec := `"spec":{"image":"acme/x:1","jobs":{"subjects":["jobs.>"]}`
	for _, bad := range []string{
		`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"x"},` + spec + `,"image":"acme/y:2"}}`,
		`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"x"},` + spec + `,"replicas":"three"}}`,
		`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"x"},` + spec + `,"egress":{"deny":[]}}}`,
		`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"x"},` + spec + `}`,
	} {
		_, got := Component([]byte(bad))
		_, want := viaYAML([]byte(bad))
		if got == nil || want == nil || got.Error() != want.Error() {
			t.Errorf("%s:\n got: %v\n YAML's: %v", bad, got, want)
		}
	}
	if c, err := Component([]byte(`{kind: Component, metadata: {name: x}}`)); err != nil || c.Metadata.Name != "x" {
		t.Errorf("YAML in flow style, which starts like JSON: %+v, %v", c.Metadata, err)
	}
	// A JSON number with a fraction is an integer to YAML: still accepted.
	c, err := Component([]byte(`{"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"x"},` + spec + `,"replicas":2.0}}`))
	if err != nil || c.Spec.Replicas == nil || *c.Spec.Replicas != 2 {
		t.Errorf("replicas 2.0: %+v, %v; want 2", c.Spec.Replicas, err)
	}
}
