package serve

import (
	"context"
	"time"

	"github.com/rs/zerolog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/events"
	"github.com/tinyctl/tinyctl/bus/lease"
)

// Kubernetes Events are written by a client of their own, throttled
// apart from the loop's writes so that a burst of events (10,000
// components created at once) never delays a child's apply. They wait in
// a queue of their own (kubeQueueSize) and enter client-go's recorder at
// the rate its client may write: client-go starts a goroutine per event
// and, past the lease-bounded deadline of the fence, retries each every
// 10 s, so a burst handed to it at once would hold tens of thousands of
// goroutines and still drop most of them. A full queue drops the event
// (tinyctl_kubernetes_events_dropped_total); the NATS event is complete.
const (
	eventsQPS     = 5
	eventsBurst   = 25
	kubeQueueSize = 1000
	// noteLimit is the longest note events.k8s.io accepts, in bytes.
	noteLimit = 1024
	// reportingController names tinyctl in each Kubernetes Event.
	reportingController = "tinyctl.io/controller"
)

// eventSink publishes each event the loop records on its NATS subject
// and, where the loop names a Kubernetes object, writes it as a
// Kubernetes Event about that object (reconcile.Events).
type eventSink struct {
	nats    *events.Publisher
	kube    *kubeQueue // nil: no Kubernetes Events
	metrics *metrics
}

func (s eventSink) Record(e event.Event, regarding *corev1.ObjectReference) {
	result := "published"
	if err := s.nats.Publish(e); err != nil {
		result = "failed"
	}
	s.metrics.events.WithLabelValues(e.Type, result).Inc()
	if s.kube != nil && regarding != nil && !s.kube.add(kubeEvent{regarding, e.Type, e.Reason, e.Message}) {
		s.metrics.kubeEventsDropped.Inc()
	}
}

// kubeEvent is one Kubernetes Event waiting to be recorded.
type kubeEvent struct {
	regarding         *corev1.ObjectReference
	typ, reason, note string
}

// kubeQueue holds Kubernetes Events until the recorder may take them.
type kubeQueue struct {
	rec     kevents.EventRecorder
	pending chan kubeEvent
	limit   flowcontrol.RateLimiter
}

// add queues e; false when the queue is full and e is dropped.
func (q *kubeQueue) add(e kubeEvent) bool {
	select {
	case q.pending <- e:
		return true
	default:
		return false
	}
}

// run hands queued events to the recorder, at most eventsQPS a second,
// until ctx ends.
func (q *kubeQueue) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-q.pending:
			if q.limit.Wait(ctx) != nil {
				return
			}
			q.rec.Eventf(e.regarding, nil, e.typ, e.reason, "Reconcile", "%s", event.Shorten(e.note, noteLimit))
		}
	}
}

// kubeEvents starts a Kubernetes Event recorder on its own client, whose
// writes fence lets through while the lease is valid, and the queue in
// front of it; stop ends both (what is queued is dropped).
func kubeEvents(cfg *rest.Config, fence lease.Fence) (q *kubeQueue, stop func(), err error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.RateLimiter = eventsQPS, eventsBurst, nil
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, nil, err
	}
	b := kevents.NewBroadcaster(apply.FencedEvents(&kevents.EventSinkImpl{Interface: cs.EventsV1()}, fence.Check))
	done := make(chan struct{})
	b.StartRecordingToSink(done)
	q = &kubeQueue{rec: b.NewRecorder(scheme.Scheme, reportingController), pending: make(chan kubeEvent, kubeQueueSize),
		limit: flowcontrol.NewTokenBucketRateLimiter(eventsQPS, eventsBurst)}
	ctx, cancel := context.WithCancel(context.Background())
	go q.run(ctx)
	return q, func() { cancel(); close(done); b.Shutdown() }, nil
}

// keepEventsStream makes sure the events stream exists, trying again
// (1 s, doubling to 1 min, for as long as the leadership lasts) while it
// cannot be created: a full JetStream store must not keep the controller
// from reconciling, and events published meanwhile are delivered to
// watchers but not kept.
func (p *Process) keepEventsStream(ctx context.Context) {
	retryUntilDone(ctx, wait.Backoff{Duration: time.Second, Factor: 2, Cap: time.Minute}, func(ctx context.Context) error {
		return events.Ensure(ctx, p.conn, events.StreamConfig{Replicas: p.cfg.Replicas})
	})
}

// retryUntilDone calls ensure until it succeeds or ctx ends, waiting b's
// steps between tries (Cap once they reach it, for ever), and logs the
// first failure and the recovery.
func retryUntilDone(ctx context.Context, b wait.Backoff, ensure func(context.Context) error) {
	log := zerolog.Ctx(ctx)
	for attempt := 0; ; attempt++ {
		err := ensure(ctx)
		if err == nil {
			if attempt > 0 {
				log.Info().Str("stream", event.Stream).Int("attempts", attempt+1).Msg("events stream created; events are kept again")
			}
			return
		}
		if attempt == 0 {
			log.Warn().Err(err).Msg("events stream not reachable; events are published but not kept; trying again")
		}
		if !bus.SleepCtx(ctx, bus.Delay(b, attempt)) {
			return
		}
	}
}
