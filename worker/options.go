package worker

import (
	"cmp"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/propagation"
)

// Defaults of the options.
const (
	// DefaultGrace is how long a draining worker waits for running
	// handlers: under Kubernetes' default termination grace period (30s).
	DefaultGrace = 25 * time.Second
	// pollWait bounds one pull request; a worker told to stop stops pulling
	// within it.
	pollWait = 2 * time.Second
	// settleTimeout bounds an ack's round trip to the server.
	settleTimeout = 5 * time.Second
)

// Option changes how a Worker runs.
type Option func(*options)

type options struct {
	maxInFlight int
	grace       time.Duration
	keepAlive   bool
	prefetch    int
	fastAcks    bool
	retryDelay  func(attempt int) time.Duration
	registry    *prometheus.Registry
	propagator  propagation.TextMapPropagator
	metricsAddr string
}

// newOptions applies opts over the defaults; grace, when positive,
// replaces DefaultGrace (the Deployment's TINYCTL_DRAIN_GRACE).
func newOptions(grace time.Duration, opts []Option) options {
	o := options{
		maxInFlight: 1,
		grace:       cmp.Or(grace, DefaultGrace),
		propagator:  propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.registry == nil {
		o.registry = newRegistry()
	}
	return o
}

// MaxInFlight sets how many jobs the worker handles at once (default 1;
// n < 1 means GOMAXPROCS). The worker pulls only as many jobs as it has
// free slots, so a job waits in the stream, not in this process.
func MaxInFlight(n int) Option {
	return func(o *options) {
		if n < 1 {
			n = runtime.GOMAXPROCS(0)
		}
		o.maxInFlight = n
	}
}

// Grace sets how long a draining worker lets running handlers finish
// (default: Config.Grace, else DefaultGrace). Then their contexts are cancelled.
func Grace(d time.Duration) Option { return func(o *options) { o.grace = d } }

// KeepAlive makes the worker tell JetStream a job is still in progress
// every half ack wait (the consumer's shortest) while its handler runs, so
// a long job is not redelivered to another worker. Without it a handler
// that runs past the ack wait is redelivered: call Job.InProgress instead.
func KeepAlive() Option { return func(o *options) { o.keepAlive = true } }

// Prefetch makes the worker fetch up to n jobs ahead of its handlers,
// into a buffer in this process, instead of asking for exactly as many
// jobs as it has free handler slots: a pull round trip then overlaps the
// handlers' work. For many small jobs a second. The price: buffered jobs'
// ack waits run while they wait, a replica KEDA just started cannot take
// them, and a draining worker hands them back (so keep n small against
// the ack wait, and leave it off for long jobs). n < 1 turns it off.
func Prefetch(n int) Option { return func(o *options) { o.prefetch = max(n, 0) } }

// UnconfirmedAcks makes the worker ack a finished job without waiting for
// the server to confirm it (JetStream's Ack rather than DoubleAck), so a
// handler slot is free a round trip sooner. An ack lost on the way (a
// broken connection) means the job is delivered again after its ack wait:
// handlers must be idempotent, as they must be anyway. Job.Ack, called by
// a handler, still waits for the confirmation.
func UnconfirmedAcks() Option { return func(o *options) { o.fastAcks = true } }

// RetryDelay sets how long JetStream waits before redelivering a job whose
// handler failed, given its delivery attempt (1 for the first). By default
// (and with nil) it is the consumer's backoff step for the attempt (the
// last step for later attempts), and DefaultRetryDelay when the consumer
// has no backoff.
func RetryDelay(f func(attempt int) time.Duration) Option {
	return func(o *options) { o.retryDelay = f }
}

// DefaultRetryDelay doubles from 1s each attempt, up to one minute: the
// delay of a consumer without backoff.
func DefaultRetryDelay(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	return min(time.Second<<min(attempt-1, 6), time.Minute)
}

// Registry registers the worker's metrics in reg, the registry a metrics
// listener serves. By default the worker has a registry of its own with
// the Go runtime and process collectors.
func Registry(reg *prometheus.Registry) Option { return func(o *options) { o.registry = reg } }

// Propagator sets how trace context is read from job headers (default:
// W3C traceparent and baggage).
func Propagator(p propagation.TextMapPropagator) Option {
	return func(o *options) { o.propagator = p }
}

// MetricsAddr makes Run serve the worker's registry at /metrics on addr
// (":9090", say), overriding EnvMetricsAddr.
func MetricsAddr(addr string) Option { return func(o *options) { o.metricsAddr = addr } }
