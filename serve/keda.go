package serve

import (
	"context"

	"github.com/rs/zerolog"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/bus/status"
)

// DefaultKEDAOperatorSelector selects KEDA's operator Deployment as KEDA's
// chart and release manifests label it.
const DefaultKEDAOperatorSelector = "app.kubernetes.io/name=keda-operator"

// kedaProbe looks for a running KEDA operator before each heartbeat, so
// that `tinyctl status`, which reads NATS and not Kubernetes, can say when
// a scaled component has nothing to scale it. It lists Deployments in all
// namespaces by label, which the chart's ClusterRole allows; a controller
// limited to --namespaces usually may not, and reports the state unknown.
type kedaProbe struct {
	kube     kubernetes.Interface
	selector string
	last     status.KEDAState
}

// refresh sets hb.KEDA to what the cluster shows now, logging changes.
func (k *kedaProbe) refresh(ctx context.Context, hb *status.Heartbeat) {
	list, err := k.kube.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: k.selector})
	hb.KEDA = ""
	if err == nil {
		hb.KEDA = kedaState(list.Items)
	}
	if hb.KEDA != k.last {
		zerolog.Ctx(ctx).Info().Err(err).Str("keda", string(hb.KEDA)).Str("selector", k.selector).Msg("KEDA operator state")
		k.last = hb.KEDA
	}
}

// kedaState is running when any of the operator Deployments has an
// available replica, absent otherwise.
func kedaState(operators []appsv1.Deployment) status.KEDAState {
	for _, d := range operators {
		if d.Status.AvailableReplicas > 0 {
			return status.KEDARunning
		}
	}
	return status.KEDAAbsent
}
