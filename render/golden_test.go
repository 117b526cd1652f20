package render_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/render"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden pins every case's rendered objects to testdata/<case>.yaml.
// Run `go test ./render/ -run TestGolden -update` after an intended change
// and review the diff.
func TestGolden(t *testing.T) {
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := goldenYAML(t, mustRender(t, tc))
			path := filepath.Join("testdata", tc.name+".yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs from rendered output (-want +got; -update to accept):\n%s", path, diff)
			}
		})
	}
}

// TestRenderTwiceIsIdentical proves Render is deterministic: no map order,
// clock or other hidden input leaks into its output.
func TestRenderTwiceIsIdentical(t *testing.T) {
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			first := goldenYAML(t, mustRender(t, tc))
			for range 5 {
				if again := goldenYAML(t, mustRender(t, tc)); !bytes.Equal(first, again) {
					t.Fatalf("second render differs:\n%s", cmp.Diff(string(first), string(again)))
				}
			}
		})
	}
}

// goldenYAML writes objs as a multi-document YAML stream, each document
// preceded by a comment naming what it is: the Kubernetes children as the
// reconciler applies them, then the JetStream configurations.
func goldenYAML(tb testing.TB, objs render.Objects) []byte {
	tb.Helper()
	var buf bytes.Buffer
	doc := func(title string, v any) {
		b, err := yaml.Marshal(v)
		if err != nil {
			tb.Fatalf("marshal %s: %v", title, err)
		}
		if buf.Len() > 0 {
			buf.WriteString("---\n")
		}
		buf.WriteString("# " + title + "\n")
		buf.Write(b)
	}
	children, err := objs.Children()
	if err != nil {
		tb.Fatalf("children: %v", err)
	}
	for _, u := range children {
		doc(u.GetKind()+" (as applied)", u.Object)
	}
	doc("jetstream.StreamConfig", objs.Stream)
	doc("jetstream.ConsumerConfig", objs.Consumer)
	if objs.DeadLetters != nil {
		doc("jetstream.StreamConfig (dead letters)", *objs.DeadLetters)
	}
	return buf.Bytes()
}
