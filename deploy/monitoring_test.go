package deploy_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// monitoringOn switches every monitoring object of the tinyctl chart on.
var monitoringOn = map[string]any{"monitoring": map[string]any{
	"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}},
	"podMonitor":     map[string]any{"enabled": true},
	"prometheusRule": map[string]any{"enabled": true, "alertLabels": map[string]any{"team": "platform"}},
	"dashboard":      map[string]any{"enabled": true, "annotations": map[string]any{"grafana_folder": "tinyctl"}},
}}

// kindsOf renders the tinyctl chart with values and returns the kinds of
// its objects, sorted, with the decoded objects by kind.
func kindsOf(t *testing.T, values map[string]any) ([]string, map[string]map[string]any) {
	t.Helper()
	out, err := render(t, "tinyctl", values)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	byKind := map[string]map[string]any{}
	for _, obj := range documents(t, out) {
		kind, _ := obj["kind"].(string)
		kinds = append(kinds, kind)
		byKind[kind] = obj
	}
	slices.Sort(kinds)
	return kinds, byKind
}

// TestMonitoringObjectsFollowTheirValues checks the monitoring objects are
// off by default (their CRDs may be absent), each appears when switched
// on, and the PodDisruptionBudget exists exactly when there are standbys.
func TestMonitoringObjectsFollowTheirValues(t *testing.T) {
	kinds, byKind := kindsOf(t, nil)
	for _, k := range []string{"ServiceMonitor", "PodMonitor", "PrometheusRule", "ConfigMap"} {
		if slices.Contains(kinds, k) {
			t.Errorf("default values render a %s", k)
		}
	}
	dep := byKind["Deployment"]["spec"].(map[string]any)
	pdb, ok := byKind["PodDisruptionBudget"]
	if dep["replicas"] != 2.0 || !ok {
		t.Fatalf("default: replicas %v, PodDisruptionBudget %v; want 2 replicas and a budget", dep["replicas"], ok)
	}
	if spec := pdb["spec"].(map[string]any); spec["maxUnavailable"] != 1.0 || spec["minAvailable"] != nil {
		t.Errorf("budget spec = %v, want maxUnavailable 1", spec)
	}
	if kinds, _ := kindsOf(t, map[string]any{"replicas": 1}); slices.Contains(kinds, "PodDisruptionBudget") {
		t.Error("one replica has a PodDisruptionBudget, which would block every drain")
	}

	kinds, byKind = kindsOf(t, monitoringOn)
	for _, k := range []string{"ServiceMonitor", "PodMonitor", "PrometheusRule", "ConfigMap"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("monitoring on renders no %s (kinds %v)", k, kinds)
		}
	}
	// The PodMonitor scrapes the port render names on every child's pods.
	pm := byKind["PodMonitor"]["spec"].(map[string]any)
	if sel := pm["selector"].(map[string]any)["matchLabels"].(map[string]any); sel["app.kubernetes.io/managed-by"] != "tinyctl" ||
		pm["namespaceSelector"].(map[string]any)["any"] != true ||
		pm["podMetricsEndpoints"].([]any)[0].(map[string]any)["port"] != "metrics" {
		t.Errorf("PodMonitor spec = %v, want tinyctl's pods in any namespace, port metrics", pm)
	}
	cm := byKind["ConfigMap"]
	if labels := cm["metadata"].(map[string]any)["labels"].(map[string]any); labels["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap labels = %v, want grafana_dashboard: \"1\"", labels)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title string `json:"title"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(cm["data"].(map[string]any)["tinyctl.json"].(string)), &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	var titles []string
	for _, p := range dash.Panels {
		titles = append(titles, p.Title)
	}
	for _, want := range []string{"Queue depth", "Reconcile latency", "Applies by result", "Retries by class", "Lease holder", "NATS connected"} {
		if !slices.Contains(titles, want) {
			t.Errorf("dashboard %q has no panel %q (has %s)", dash.UID, want, strings.Join(titles, ", "))
		}
	}
}

// TestTheFenceIsOnByDefault: the chart ships the write fence's policy and
// binding unless fence.enabled is false. What the policy refuses is
// proven against the real API server (apply TestAWriteOfAnOlderTenureIsRefused).
func TestTheFenceIsOnByDefault(t *testing.T) {
	kinds, byKind := kindsOf(t, nil)
	if !slices.Contains(kinds, "ValidatingAdmissionPolicy") || !slices.Contains(kinds, "ValidatingAdmissionPolicyBinding") {
		t.Fatalf("default values render %v, want the fence's policy and binding", kinds)
	}
	policy := byKind["ValidatingAdmissionPolicy"]["metadata"].(map[string]any)["name"]
	if got := byKind["ValidatingAdmissionPolicyBinding"]["spec"].(map[string]any)["policyName"]; got != policy {
		t.Errorf("the binding names policy %v, the policy is %v", got, policy)
	}
	kinds, _ = kindsOf(t, map[string]any{"fence": map[string]any{"enabled": false}})
	if slices.Contains(kinds, "ValidatingAdmissionPolicy") {
		t.Error("fence.enabled false still renders the policy")
	}
}
