package serve

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	kevents "k8s.io/client-go/tools/events"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/bus/events"
)

// Kubernetes Events are written by a client of their own, throttled
// apart from the loop's writes: a burst of events (10,000 components
// created at once) waits, or is dropped by client-go's broadcaster once
// 1,000 are queued, and never delays a child's apply.
const (
	eventsQPS   = 5
	eventsBurst = 25
	// reportingController names tinyctl in each Kubernetes Event.
	reportingController = "tinyctl.io/controller"
)

// eventSink publishes each event the loop records on its NATS subject
// and, where the loop names a Kubernetes object, writes it as a
// Kubernetes Event about that object (reconcile.Events).
type eventSink struct {
	nats    *events.Publisher
	kube    kevents.EventRecorder // nil: no Kubernetes Events
	metrics *metrics
}

func (s eventSink) Record(e event.Event, regarding *corev1.ObjectReference) {
	result := "published"
	if err := s.nats.Publish(e); err != nil {
		result = "failed"
	}
	s.metrics.events.WithLabelValues(e.Type, result).Inc()
	if s.kube != nil && regarding != nil {
		s.kube.Eventf(regarding, nil, e.Type, e.Reason, "Reconcile", "%s", e.Message)
	}
}

// kubeEvents starts a Kubernetes Event recorder on its own client;
// stop ends it (what is queued is dropped).
func kubeEvents(cfg *rest.Config) (rec kevents.EventRecorder, stop func(), err error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.RateLimiter = eventsQPS, eventsBurst, nil
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, nil, err
	}
	b := kevents.NewBroadcaster(&kevents.EventSinkImpl{Interface: cs.EventsV1()})
	done := make(chan struct{})
	b.StartRecordingToSink(done)
	return b.NewRecorder(scheme.Scheme, reportingController), func() { close(done); b.Shutdown() }, nil
}
