package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// The shipped alerts and dashboard queries are parsed by Prometheus's own
// PromQL parser, the authority on what Prometheus will run. It is why
// prometheus/prometheus is in go.mod: a test-only dependency, of which
// only the parser and its labels package are compiled (its cloud
// discovery SDKs are listed in go.sum but never built).

// monitoringValues switch every monitoring object of the tinyctl chart on.
var monitoringValues = map[string]any{"monitoring": map[string]any{
	"serviceMonitor": map[string]any{"enabled": true},
	"podMonitor":     map[string]any{"enabled": true},
	"prometheusRule": map[string]any{"enabled": true},
	"dashboard":      map[string]any{"enabled": true},
}}

// targetLabels are the labels Prometheus adds to every scraped series;
// the controller's /metrics cannot show them.
var targetLabels = []string{"job", "namespace", "pod", "instance", "service", "container", "endpoint"}

// query is one PromQL expression the chart ships, and what holds it.
type query struct{ where, expr string }

// shippedQueries returns the expressions of every alert and of every
// dashboard panel and variable, Grafana's variables given example values.
func shippedQueries(t *testing.T, out map[string]string) []query {
	t.Helper()
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct{ Alert, Expr string }
			}
		}
	}
	if err := yaml.Unmarshal([]byte(out["tinyctl/templates/prometheusrule.yaml"]), &rule); err != nil {
		t.Fatal(err)
	}
	var qs []query
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			qs = append(qs, query{"alert " + r.Alert, r.Expr})
		}
	}
	var cm struct{ Data map[string]string }
	if err := yaml.Unmarshal([]byte(out["tinyctl/templates/dashboard.yaml"]), &cm); err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct {
				Name  string
				Query any
			}
		}
	}
	if err := json.Unmarshal([]byte(cm.Data["tinyctl.json"]), &dash); err != nil {
		t.Fatal(err)
	}
	grafana := strings.NewReplacer("$__rate_interval", "5m", "$namespace", ".*")
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			qs = append(qs, query{"panel " + p.Title, grafana.Replace(tg.Expr)})
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((\w+),\s*\w+\)$`)
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			m := labelValues.FindStringSubmatch(fmt.Sprint(q["query"]))
			if m == nil {
				t.Fatalf("variable %s: query %v is not label_values(metric, label)", v.Name, q["query"])
			}
			qs = append(qs, query{"variable " + v.Name, m[1]})
		}
	}
	return qs
}

// selectors parses expr as PromQL and returns its series selectors.
func selectors(expr string) ([]*parser.VectorSelector, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []*parser.VectorSelector
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	return out, nil
}

// exposed is what a /metrics page exports: label sets by sample name
// (histograms as their _bucket, _sum and _count samples).
type exposed map[string][]labels.Labels

func parseExposition(text string) (exposed, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	out := exposed{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			b := labels.NewScratchBuilder(len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				b.Add(l.GetName(), l.GetValue())
			}
			b.Sort()
			ls := b.Labels()
			names := []string{name}
			if f.GetType() == dto.MetricType_HISTOGRAM {
				names = []string{name + "_bucket", name + "_sum", name + "_count"}
			}
			for _, n := range names {
				out[n] = append(out[n], ls)
			}
		}
	}
	return out, nil
}

// check returns why vs selects nothing the controller exports: an unknown
// name, or label matchers (other than target labels) no series satisfies.
func (e exposed) check(vs *parser.VectorSelector) error {
	series, ok := e[vs.Name]
	if !ok {
		return fmt.Errorf("metric %s is not exported", vs.Name)
	}
	var ms []*labels.Matcher
	for _, m := range vs.LabelMatchers {
		if m.Name != model.MetricNameLabel && !slices.Contains(targetLabels, m.Name) {
			ms = append(ms, m)
		}
	}
	for _, ls := range series {
		if slices.IndexFunc(ms, func(m *labels.Matcher) bool { return !m.Matches(ls.Get(m.Name)) }) < 0 {
			return nil
		}
	}
	return fmt.Errorf("no series of %s matches %v (exported: %v)", vs.Name, ms, series)
}

// TestShippedQueriesUseExportedSeries parses every PromQL expression the
// chart ships (alerts, dashboard panels and variables) and checks each
// series it selects, name and label values, against the /metrics of a
// real controller that has reconciled a component.
func TestShippedQueriesUseExportedSeries(t *testing.T) {
	t.Parallel()
	qs := shippedQueries(t, renderController(t, "tinyctl-system", monitoringValues))
	var alerts []string
	for _, q := range qs {
		if name, ok := strings.CutPrefix(q.where, "alert "); ok {
			alerts = append(alerts, name)
		}
	}
	want := []string{"TinyctlComponentsStalled", "TinyctlClusterStale", "TinyctlClusterNameConflict", "TinyctlJobsDeadLettered", "TinyctlReconcileErrors", "TinyctlLeaseFlapping",
		"TinyctlNoLeader", "TinyctlNATSDisconnected", "TinyctlQueueStuck"}
	if !slices.Equal(alerts, want) {
		t.Errorf("alerts = %v, want %v", alerts, want)
	}

	u := newUser(t)
	ns := kube.RestrictedNamespace(t)
	p := u.serveFor(ns)
	u.must("apply", "-f", u.file("c.yaml", component(ns, "metered", "registry.example.com/acme/worker:1")))
	u.waitStatus(ns, ns+" metered "+e2eCluster+" False Progressing 1/1 live")
	var exp exposed
	testenv.Eventually(t, 30*time.Second, func() error {
		_, body, err := p.Get("/metrics")
		if err != nil {
			return err
		}
		if exp, err = parseExposition(body); err != nil {
			return err
		}
		if _, ok := exp["tinyctl_cluster_stale"]; !ok {
			return fmt.Errorf("no stale-cluster series yet")
		}
		return nil
	})
	for _, q := range qs {
		vss, err := selectors(q.expr)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", q.where, q.expr, err)
			continue
		}
		if len(vss) == 0 {
			t.Errorf("%s: %q selects no series", q.where, q.expr)
		}
		for _, vs := range vss {
			if err := exp.check(vs); err != nil {
				t.Errorf("%s: %v", q.where, err)
			}
		}
	}
}
