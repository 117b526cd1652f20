package validate

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
)

func inNamespace(ns string, subjects, publish []string) api.Component {
	return defaults.Apply(api.Component{APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: "w", Namespace: ns},
		Spec:     api.Spec{Image: "acme/w:1", Jobs: api.Jobs{Subjects: subjects, Publish: publish}}})
}

func TestTenancyScopesSubjectsToTheNamespace(t *testing.T) {
	custom := Tenancy{Prefixes: map[string][]string{"shop": {"orders.>", "shop.>"}}}
	tests := []struct {
		name     string
		t        Tenancy
		c        api.Component
		problems []string
	}{
		{"own namespace", Tenancy{}, inNamespace("a", []string{"a.jobs.>", "a.x"}, []string{"a.results.*"}), nil},
		{"another team's subjects", Tenancy{}, inNamespace("a", []string{"b.jobs.>", "a.ok"}, []string{"b.results"}), []string{
			`spec.jobs.subjects[0]: Forbidden: "b.jobs.>" is outside the subjects namespace a may use (a.>)`,
			`spec.jobs.publish[0]: Forbidden: "b.results" is outside the subjects namespace a may use (a.>)`}},
		{"the bare namespace token is not under it", Tenancy{}, inNamespace("a", []string{"a"}, nil), []string{
			`spec.jobs.subjects[0]: Forbidden: "a" is outside the subjects namespace a may use (a.>)`}},
		{"a wildcard reaching out of the prefix", Tenancy{}, inNamespace("a", []string{"a.x"}, []string{"*.results"}), nil /* malformed: reported by Component */},
		{"configured prefixes replace the default", custom, inNamespace("shop", []string{"orders.new", "shop.cart.>"}, nil), nil},
		{"configured prefixes are all there is", custom, inNamespace("shop", []string{"shop.x", "orders2.x"}, nil), []string{
			`spec.jobs.subjects[1]: Forbidden: "orders2.x" is outside the subjects namespace shop may use (orders.>, shop.>)`}},
		{"off", Tenancy{Off: true}, inNamespace("a", []string{"b.jobs.>"}, nil), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range tt.t.Subjects(tt.c) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.problems, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseTenancy(t *testing.T) {
	got, err := ParseTenancy([]string{"shop=orders.>,shop.>", "billing=pay.*.jobs"})
	if err != nil {
		t.Fatal(err)
	}
	want := Tenancy{Prefixes: map[string][]string{"shop": {"orders.>", "shop.>"}, "billing": {"pay.*.jobs"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if off, err := ParseTenancy([]string{"off"}); err != nil || !off.Off {
		t.Errorf("off: %+v %v", off, err)
	}
	for _, bad := range [][]string{{"shop"}, {"=x.>"}, {"shop="}, {"shop=a.>", "shop=b.>"}, {"shop=>"}, {"shop=$JS.>"}} {
		if _, err := ParseTenancy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestManySubjectsAreRefusedQuickly(t *testing.T) {
	subjects := make([]string, 16000)
	for i := range subjects {
		subjects[i] = "a.s" + strings.Repeat("x", i%7) + ".n" + string(rune('a'+i%26)) + ".>"
	}
	c := inNamespace("a", subjects, subjects)
	start := time.Now()
	errs := Component(c)
	took := time.Since(start)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{"spec.jobs.subjects: Too many: 16000: must have at most 256 items", "spec.jobs.publish: Too many: 16000: must have at most 256 items"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("problems (-want +got):\n%s", diff)
	}
	t.Logf("16,000 subjects refused in %s", took)
}

func TestProducerSubjectsStayInTheirNamespace(t *testing.T) {
	prefixes := Tenancy{Prefixes: map[string][]string{"orders": {"orders.>", "billing.invoices.*"}}}
	for _, tc := range []struct {
		name     string
		tenancy  Tenancy
		ns       string
		subjects []string
		want     []string // substrings of the error; none means valid
	}{
		{"its own namespace's subjects", Tenancy{}, "media", []string{"media.thumbnail.*", "media.resize"}, nil},
		{"a granted prefix", prefixes, "orders", []string{"billing.invoices.eu"}, nil},
		{"another namespace's subject", Tenancy{}, "media", []string{"billing.x"}, []string{`"billing.x" is outside the subjects namespace media may use (media.>)`}},
		{"every bad subject at once", Tenancy{}, "media", []string{"$JS.API.>", "media.ok", ">", "other.y"},
			[]string{`"$JS.API.>": subjects under "$JS" are reserved`, `">": the first token must be literal`, `"other.y" is outside`}},
		{"no subject", Tenancy{}, "media", nil, []string{"at least one subject"}},
		{"tenancy off still checks the grammar", Tenancy{Off: true}, "media", []string{"billing.x", "_INBOX.x"}, []string{`"_INBOX.x": subjects under _INBOX are reserved`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.tenancy.Producer(tc.ns, tc.subjects)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Producer = %v, want valid", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Producer = nil, want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Producer = %v, want it to say %q", err, w)
				}
			}
		})
	}
}
