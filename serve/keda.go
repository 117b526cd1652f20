package serve

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/rs/zerolog"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/api/cluster"
)

// DefaultKEDAOperatorSelector selects KEDA's operator Deployment as KEDA's
// chart and release manifests label it.
const DefaultKEDAOperatorSelector = "app.kubernetes.io/name=keda-operator"

// kedaProbe looks for a running KEDA operator before each heartbeat, so
// that `tinyctl status`, which reads NATS and not Kubernetes, can say when
// a scaled component has nothing to scale it. It lists Deployments in all
// namespaces by label, which the chart's ClusterRole allows. A controller
// limited to --namespaces may not; it reads instead the one APIService
// through which KEDA serves external metrics (the chart grants get on that
// name only): absent, unavailable or served by something else than KEDA,
// no KEDA scales anything. Neither allowed: the state is unknown.
type kedaProbe struct {
	kube     kubernetes.Interface
	selector string
	last     cluster.KEDAState
}

// refresh sets hb.KEDA to what the cluster shows now, logging changes.
func (k *kedaProbe) refresh(ctx context.Context, hb *cluster.Heartbeat) {
	list, err := k.kube.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: k.selector})
	hb.KEDA = ""
	switch {
	case err == nil:
		hb.KEDA = kedaState(list.Items)
	case apierrors.IsForbidden(err):
		hb.KEDA, err = k.metricsAPIState(ctx)
	}
	if hb.KEDA != k.last {
		zerolog.Ctx(ctx).Info().Err(err).Str("keda", string(hb.KEDA)).Str("selector", k.selector).Msg("KEDA operator state")
		k.last = hb.KEDA
	}
}

// externalMetricsAPI is the APIService KEDA's metrics server registers.
const externalMetricsAPI = "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.external.metrics.k8s.io"

// metricsAPIState judges KEDA by the external metrics APIService: running
// when KEDA's metrics server backs it and it is Available.
func (k *kedaProbe) metricsAPIState(ctx context.Context) (cluster.KEDAState, error) {
	raw, err := k.kube.Discovery().RESTClient().Get().AbsPath(externalMetricsAPI).DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return cluster.KEDAAbsent, nil
	}
	if err != nil {
		return "", err
	}
	var svc struct {
		Spec struct {
			Service *struct{ Name string } `json:"service"`
		} `json:"spec"`
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &svc); err != nil {
		return "", err
	}
	if svc.Spec.Service == nil || !strings.Contains(svc.Spec.Service.Name, "keda") {
		return cluster.KEDAAbsent, nil
	}
	for _, c := range svc.Status.Conditions {
		if c.Type == "Available" && c.Status == "True" {
			return cluster.KEDARunning, nil
		}
	}
	return cluster.KEDAAbsent, nil
}

// kedaState is running when any of the operator Deployments has an
// available replica, absent otherwise.
func kedaState(operators []appsv1.Deployment) cluster.KEDAState {
	for _, d := range operators {
		if d.Status.AvailableReplicas > 0 {
			return cluster.KEDARunning
		}
	}
	return cluster.KEDAAbsent
}
