package devmode

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/localkube"
)

// ReadyLine is printed once everything runs; tests and scripts wait for it.
const ReadyLine = "tinyctl dev is ready"

func ready(addr string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// printUsage tells the user how to point kubectl and tinyctl at dev mode.
func printUsage(w io.Writer, nats *bus.Embedded, cp *localkube.ControlPlane, o Options) {
	fmt.Fprintf(w, `
%s. In another shell:

  export KUBECONFIG=%s
  export TINYCTL_NATS_URL=%s

  tinyctl status -A                      # one row per component: Ready, revision, age
  tinyctl list -A                        # what the spec bucket holds
  kubectl get deploy,networkpolicy,scaledobject -A -l app.kubernetes.io/managed-by=tinyctl
  tinyctl apply -f examples/pdf-extractor.yaml   # edit and re-apply; the cluster follows

  NATS monitoring:   %s
  controller health: http://%s/readyz   metrics: http://%s/metrics

This cluster is named %q with labels %s: components whose placement
selects other clusters do not run here. No nodes and no KEDA run in dev mode:
Deployments and ScaledObjects are created, but no pods start.
Press Ctrl-C to stop everything.
`, ReadyLine, cp.Kubeconfig, nats.ClientURL(), nats.MonitorURL(), o.HealthAddr, o.MetricsAddr,
		ClusterName, labels.Set(ClusterLabels))
}
