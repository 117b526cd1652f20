package devmode

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/localkube"
)

// ReadyLine is printed once everything runs; tests and scripts wait for it.
const ReadyLine = "tinyctl dev is ready"

// printUsage tells the user how to point kubectl and tinyctl at dev mode.
func printUsage(w io.Writer, nats *bus.Embedded, cp *localkube.ControlPlane, health, metrics string, node bool) {
	fmt.Fprintf(w, `
%s. In another shell:

  export KUBECONFIG=%s
  export TINYCTL_NATS_URL=%s

  tinyctl status -A                      # one row per component: Ready, revision, age
  tinyctl list -A                        # what the spec bucket holds
  kubectl get deploy,networkpolicy,scaledobject -A -l app.kubernetes.io/managed-by=tinyctl
  tinyctl apply -f examples/pdf-extractor.yaml   # edit and re-apply; the cluster follows

  NATS monitoring:   %s
  controller health: %s   metrics: %s

This cluster is named %q with labels %s: components whose placement
selects other clusters do not run here. %s
Press Ctrl-C to stop everything.
`, ReadyLine, cp.Kubeconfig, nats.ClientURL(), nats.MonitorURL(), url(health, "/readyz"), url(metrics, "/metrics"),
		ClusterName, labels.Set(ClusterLabels), podsText(node))
}

// podsText says where workers run.
func podsText(node bool) string {
	if node {
		return `A real node runs the workers as pods (kubectl get pods -A): a component
is Ready when its pods run its revision, Degraded with the kubelet's reason
when they cannot (an image that is not on the node, say: nothing is pulled).
No KEDA runs: scaled components keep one pod.`
	}
	return fmt.Sprintf(`No nodes and no KEDA run in dev mode:
Deployments and ScaledObjects are created, but no pods start, so Ready here
means every child is applied (on a cluster it also means the pods run); a
component annotated %s runs that command as a local worker instead
(--node runs pods instead).`, api.AnnotationDevRun)
}

// url is http://addr/path, or "off" for a disabled address.
func url(addr, path string) string {
	if addr == "" {
		return "off"
	}
	return "http://" + addr + path
}
