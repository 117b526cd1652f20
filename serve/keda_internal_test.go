package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api/cluster"
)

// TestKEDAStateFromTheMetricsAPIService: a controller that may not list
// Deployments judges KEDA by its external metrics APIService (a unit test:
// the API server's answers are canned).
func TestKEDAStateFromTheMetricsAPIService(t *testing.T) {
	const keda = `{"spec":{"service":{"name":"keda-operator-metrics-apiserver","namespace":"keda"}},`
	tests := []struct {
		name   string
		status int
		body   string
		want   cluster.KEDAState
	}{
		{"no APIService", http.StatusNotFound, `{"kind":"Status","code":404,"reason":"NotFound"}`, cluster.KEDAAbsent},
		{"KEDA's, available", http.StatusOK, keda + `"status":{"conditions":[{"type":"Available","status":"True"}]}}`, cluster.KEDARunning},
		{"KEDA's, unavailable", http.StatusOK, keda + `"status":{"conditions":[{"type":"Available","status":"False"}]}}`, cluster.KEDAAbsent},
		{"another adapter's", http.StatusOK, `{"spec":{"service":{"name":"prometheus-adapter"}},"status":{"conditions":[{"type":"Available","status":"True"}]}}`, cluster.KEDAAbsent},
		{"forbidden too", http.StatusForbidden, `{"kind":"Status","code":403,"reason":"Forbidden"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path != externalMetricsAPI {
					w.WriteHeader(http.StatusForbidden) // the Deployment list
					_, _ = w.Write([]byte(`{"kind":"Status","code":403,"reason":"Forbidden"}`))
					return
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			var hb cluster.Heartbeat
			(&kedaProbe{kube: cs, selector: DefaultKEDAOperatorSelector}).refresh(context.Background(), &hb)
			if hb.KEDA != tt.want {
				t.Errorf("KEDA %q, want %q", hb.KEDA, tt.want)
			}
		})
	}
}
