package serve

import (
	"context"
	"math"
	"time"

	"github.com/rs/zerolog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	kevents "k8s.io/client-go/tools/events"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus/events"
	"github.com/tinyctl/tinyctl/bus/lease"
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

// kubeEvents starts a Kubernetes Event recorder on its own client, whose
// writes fence lets through while the lease is valid; stop ends it (what
// is queued is dropped).
func kubeEvents(cfg *rest.Config, fence lease.Fence) (rec kevents.EventRecorder, stop func(), err error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.RateLimiter = eventsQPS, eventsBurst, nil
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, nil, err
	}
	b := kevents.NewBroadcaster(apply.FencedEvents(&kevents.EventSinkImpl{Interface: cs.EventsV1()}, fence.Check))
	done := make(chan struct{})
	b.StartRecordingToSink(done)
	return b.NewRecorder(scheme.Scheme, reportingController), func() { close(done); b.Shutdown() }, nil
}

// keepEventsStream makes sure the events stream exists, trying again
// (1 s, doubling to 1 min) while it cannot be created: a full JetStream
// store must not keep the controller from reconciling, and events
// published meanwhile are delivered to watchers but not kept.
func (p *Process) keepEventsStream(ctx context.Context) {
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Cap: time.Minute, Steps: math.MaxInt32}
	warned := false
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		err := events.Ensure(ctx, p.conn, events.StreamConfig{Replicas: p.cfg.Replicas})
		if err == nil {
			if warned {
				zerolog.Ctx(ctx).Info().Str("stream", event.Stream).Msg("events stream created; events are kept again")
			}
			return true, nil
		}
		if !warned {
			zerolog.Ctx(ctx).Warn().Err(err).Msg("events stream not reachable; events are published but not kept; trying again")
			warned = true
		}
		return false, nil
	})
}
