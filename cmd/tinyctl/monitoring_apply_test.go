package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// The Prometheus Operator release whose published CRDs the monitoring
// objects are checked against, fetched through the Go module proxy.
const (
	promOperator        = "github.com/prometheus-operator/prometheus-operator"
	promOperatorVersion = "v0.90.1"
)

// TestMonitoringObjectsAreAcceptedByTheAPIServer installs the Prometheus
// Operator's own ServiceMonitor, PodMonitor and PrometheusRule CRDs, applies the
// chart's monitoring objects, dashboard and disruption budget, and reads
// each back whole: the API server neither rejects nor prunes a field (a
// misspelt field would be dropped silently by the CRD's schema).
func TestMonitoringObjectsAreAcceptedByTheAPIServer(t *testing.T) {
	t.Parallel()
	dir := testenv.ModuleDir(t, promOperator, promOperatorVersion)
	for _, plural := range []string{"servicemonitors", "podmonitors", "prometheusrules"} {
		b, err := os.ReadFile(filepath.Join(dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_"+plural+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		kube.ApplyCRD(t, b)
	}
	ns := kube.RestrictedNamespace(t)
	out := renderController(t, ns, monitoringValues)
	m := kube.Manager(t)
	dyn, _ := kube.Dynamic(t)
	ctx := context.Background()
	for _, tmpl := range []string{"servicemonitor", "podmonitor", "prometheusrule", "dashboard", "poddisruptionbudget"} {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(out["tinyctl/templates/"+tmpl+".yaml"]), &obj.Object); err != nil || obj.Object == nil {
			t.Fatalf("%s: %v (rendered %q)", tmpl, err, out["tinyctl/templates/"+tmpl+".yaml"])
		}
		res, err := m.Apply(ctx, obj)
		if err != nil || res.Action != action.Created {
			t.Fatalf("apply %s: %s, %v", tmpl, res, err)
		}
		mapping, err := m.Resource(obj.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		live, err := dyn.Resource(mapping.Resource).Namespace(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		field := "spec"
		if obj.GetKind() == "ConfigMap" {
			field = "data"
		}
		if diff := cmp.Diff(jsonValue(t, obj.Object[field]), jsonValue(t, live.Object[field])); diff != "" {
			t.Errorf("%s %s as stored differs from what was applied (-applied +stored):\n%s", obj.GetKind(), obj.GetName(), diff)
		}
	}
}

// jsonValue returns v as encoding/json decodes it (numbers as float64),
// so values decoded from YAML and from the API server compare equal.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
