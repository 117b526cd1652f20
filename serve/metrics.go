package serve

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/reconcile"
)

// metrics are the controller's Prometheus series. It implements
// reconcile.Observer.
type metrics struct {
	reg      *prometheus.Registry
	duration *prometheus.HistogramVec
	// steps times the round trips a component's apply waits for, one
	// after the other (reconcile.Steps): where a reconcile's time goes.
	steps    *prometheus.HistogramVec
	applies  *prometheus.CounterVec
	retries  *prometheus.CounterVec
	rechecks *prometheus.CounterVec
	// recheckTook and recheckFound say what the periodic checks cost and
	// what they found to reconcile.
	recheckTook  *prometheus.HistogramVec
	recheckFound *prometheus.CounterVec
	leader       prometheus.Gauge
	connected    prometheus.Gauge
	queueDepth   prometheus.GaugeFunc
	watchLag     prometheus.GaugeFunc
	stalled      prometheus.GaugeFunc
	// acquired counts the times this process won the lease; summed over
	// a cluster's replicas it counts leader changes.
	acquired prometheus.Counter
	// staleClusters is 1 for each cluster whose status records outlive its
	// heartbeat (what `tinyctl status` shows as stale), 0 for live ones.
	staleClusters *prometheus.GaugeVec
	// nameConflict is 1 while another Kubernetes cluster beats under this
	// cluster's name (status.NameConflict).
	nameConflict prometheus.Gauge
	// deadLetters counts jobs moved to dead-letter streams and jobs
	// replayed from them (which components: the log and tinyctl jobs
	// dead; a label per component would grow without bound).
	deadLetters *prometheus.CounterVec
	// events counts the events the loop recorded (docs/events.md), by
	// type and whether the publish left this process.
	events *prometheus.CounterVec
	// kubeEventsDropped counts Kubernetes Events dropped because their
	// queue was full (serve/events.go).
	kubeEventsDropped prometheus.Counter
}

// loopView is what the gauges read from the running loop.
type loopView interface {
	QueueDepth() int
	LastRevision() uint64
	Stalled() int
}

// Label values known in advance, exported at zero from the start so that
// rate() and increase() see a series' first increment.
var (
	reconcileResults = []string{"success", reconcile.Transient.String(), reconcile.Permanent.String(), reconcile.Waiting.String()}
	retryClasses     = []string{reconcile.Transient.String(), reconcile.Waiting.String()}
	recheckKinds     = []string{"partial", "full"}
	recheckFindings  = []string{reconcile.FoundUnsettled, reconcile.FoundStreamMissing, reconcile.FoundNoConsumer,
		reconcile.FoundStreamDrift, reconcile.FoundListingFailed}
)

func newMetrics(loop func() loopView, latest func() uint64) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tinyctl_reconcile_duration_seconds",
		Help:    "Time to reconcile one component key, by result (success or error class).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"result"})
	m.steps = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tinyctl_reconcile_step_duration_seconds",
		Help:    "Time of each round trip a reconcile waits for, by step: guard (the key's latest revision read before any write), jetstream (stream and consumer ensured), kubernetes (the children applied in order), status (the record written).",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"step"})
	m.applies = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tinyctl_applies_total",
		Help: "Kubernetes child writes by kind and result (created, configured, unchanged = skipped, deleted, absent, failed).",
	}, []string{"kind", "result"})
	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tinyctl_reconcile_retries_total",
		Help: "Keys requeued after a failure, by class (transient or waiting).",
	}, []string{"class"})
	m.rechecks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tinyctl_rechecks_total",
		Help: "Periodic checks run, by kind (partial, or full: every stream's config and consumer audited too).",
	}, []string{"kind"})
	m.recheckTook = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tinyctl_recheck_duration_seconds",
		Help:    "Time one periodic check took, by kind (partial or full).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"kind"})
	m.recheckFound = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tinyctl_recheck_found_total",
		Help: "Components a periodic check enqueued, by what it found (unsettled, stream_missing, no_consumer, stream_drift, listing_failed).",
	}, []string{"found"})
	m.deadLetters = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tinyctl_dead_letters_total",
		Help: "Jobs that used up their deliveries, by event: moved (to their component's dead-letter stream) or replayed (put back on its queue).",
	}, []string{"event"})
	m.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tinyctl_events_total",
		Help: "Events the controller recorded about components, by type (Normal, Warning) and result (published, or failed: the connection was closed or its outage buffer full).",
	}, []string{"type", "result"})
	m.kubeEventsDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tinyctl_kubernetes_events_dropped_total",
		Help: "Kubernetes Events not written because 1,000 were already waiting for the events client (5 a second); the NATS events are complete.",
	})
	m.addProcessSeries(loop, latest)
	m.addHealthSeries(loop)
	m.reg.MustRegister(m.duration, m.steps, m.applies, m.retries, m.rechecks, m.recheckTook, m.recheckFound, m.leader, m.connected, m.queueDepth, m.watchLag,
		m.stalled, m.acquired, m.staleClusters, m.nameConflict, m.deadLetters, m.events, m.kubeEventsDropped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.initLabels()
	return m
}

// addProcessSeries makes the gauges of the process's state: leadership,
// the NATS connection, a name conflict, the queue and the watch's lag.
func (m *metrics) addProcessSeries(loop func() loopView, latest func() uint64) {
	m.leader = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "tinyctl_leader", Help: "1 while this process holds the cluster's lease and reconciles.",
	})
	m.connected = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "tinyctl_nats_connected", Help: "1 while the NATS connection is up.",
	})
	m.nameConflict = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "tinyctl_cluster_name_conflict",
		Help: "1 while another Kubernetes cluster beats under this cluster's name, on this NATS or at the fleet hub.",
	})
	m.queueDepth = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tinyctl_queue_depth", Help: "Component keys waiting to be reconciled.",
	}, func() float64 {
		if l := loop(); l != nil {
			return float64(l.QueueDepth())
		}
		return 0
	})
	m.watchLag = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tinyctl_kv_watch_lag_revisions",
		Help: "Latest spec-bucket revision minus the last revision the loop has received.",
	}, func() float64 {
		l := loop()
		if l == nil {
			return 0
		}
		if lat, seen := latest(), l.LastRevision(); lat > seen {
			return float64(lat - seen)
		}
		return 0
	})
}

// addHealthSeries makes the series the alerts watch beyond the loop's
// own: stalled components, lease acquisitions and stale clusters.
func (m *metrics) addHealthSeries(loop func() loopView) {
	m.stalled = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tinyctl_components_stalled",
		Help: "Components whose latest revision failed for good (Stalled=True); they wait for a new revision.",
	}, func() float64 {
		if l := loop(); l != nil {
			return float64(l.Stalled())
		}
		return 0
	})
	m.acquired = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tinyctl_lease_acquisitions_total",
		Help: "Times this process won the cluster's lease; summed over replicas, leader changes.",
	})
	m.staleClusters = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tinyctl_cluster_stale",
		Help: "1 for a cluster whose status records outlive its heartbeat (its controller stopped beating), 0 for a live one.",
	}, []string{"cluster"})
}

// initLabels exports every known label combination at zero.
func (m *metrics) initLabels() {
	for _, r := range reconcileResults {
		m.duration.WithLabelValues(r)
	}
	for _, s := range reconcile.Steps {
		m.steps.WithLabelValues(string(s))
	}
	for _, c := range retryClasses {
		m.retries.WithLabelValues(c)
	}
	for _, k := range recheckKinds {
		m.rechecks.WithLabelValues(k)
		m.recheckTook.WithLabelValues(k)
	}
	for _, f := range recheckFindings {
		m.recheckFound.WithLabelValues(f)
	}
	m.deadLetters.WithLabelValues("moved")
	m.deadLetters.WithLabelValues("replayed")
	for _, t := range []string{event.Normal, event.Warning} {
		m.events.WithLabelValues(t, "published")
		m.events.WithLabelValues(t, "failed")
	}
}

// setStaleClusters replaces the stale-cluster series with stale, by
// cluster: a cluster no longer named loses its series.
func (m *metrics) setStaleClusters(stale map[string]bool) {
	m.staleClusters.Reset()
	for cluster, s := range stale {
		boolGauge(m.staleClusters.WithLabelValues(cluster), s)
	}
}

// Reconciled implements reconcile.Observer.
func (m *metrics) Reconciled(_ string, d time.Duration, err error) {
	result := "success"
	if err != nil {
		class, _ := reconcile.Classify(err)
		result = class.String()
	}
	m.duration.WithLabelValues(result).Observe(d.Seconds())
}

// Stepped implements reconcile.Observer.
func (m *metrics) Stepped(s reconcile.Step, d time.Duration) {
	m.steps.WithLabelValues(string(s)).Observe(d.Seconds())
}

// Applied implements reconcile.Observer.
func (m *metrics) Applied(r apply.Result) {
	m.applies.WithLabelValues(r.Kind, string(r.Action)).Inc()
}

// Retried implements reconcile.Observer.
func (m *metrics) Retried(class reconcile.Class) {
	m.retries.WithLabelValues(class.String()).Inc()
}

func boolGauge(g prometheus.Gauge, v bool) {
	if v {
		g.Set(1)
		return
	}
	g.Set(0)
}

// DeadLettered implements reconcile.Observer.
func (m *metrics) DeadLettered(_ string, jobs int) {
	m.deadLetters.WithLabelValues("moved").Add(float64(jobs))
}

// Replayed counts jobs put back on a queue.
func (m *metrics) Replayed(jobs int) {
	m.deadLetters.WithLabelValues("replayed").Add(float64(jobs))
}

// Rechecked implements reconcile.Observer.
func (m *metrics) Rechecked(r reconcile.Recheck) {
	kind := "partial"
	if r.Full {
		kind = "full"
	}
	m.rechecks.WithLabelValues(kind).Inc()
	m.recheckTook.WithLabelValues(kind).Observe(r.Took.Seconds())
	for found, n := range r.Found {
		m.recheckFound.WithLabelValues(found).Add(float64(n))
	}
}
