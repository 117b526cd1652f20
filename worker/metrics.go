package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the worker's own Prometheus metrics.
type metrics struct {
	jobs     *prometheus.CounterVec
	duration prometheus.Histogram
	inFlight prometheus.Gauge
	pullErrs prometheus.Counter
}

func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// newMetrics registers the worker's metrics in reg. It fails when reg
// already holds them (two workers sharing one registry).
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tinyctl_worker_jobs_total",
			Help: "Jobs handled, by outcome: ack, nak, error, panic, term, returned (pulled while draining), unsettled (ack failed).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tinyctl_worker_handler_duration_seconds",
			Help:    "Time the handler took per job.",
			Buckets: prometheus.ExponentialBuckets(0.005, 4, 10),
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tinyctl_worker_jobs_in_flight", Help: "Jobs whose handler is running.",
		}),
		pullErrs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tinyctl_worker_pull_errors_total", Help: "Pull requests that failed (the worker retries with backoff).",
		}),
	}
	for _, c := range []prometheus.Collector{m.jobs, m.duration, m.inFlight, m.pullErrs} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("worker metrics: %w", err)
		}
	}
	return m, nil
}

// serveMetrics listens on addr and serves reg at /metrics until ctx ends.
// It fails at once when addr cannot be listened on.
func serveMetrics(ctx context.Context, addr string, reg *prometheus.Registry) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("worker metrics listener %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger(ctx).Error().Err(err).Msg("metrics listener stopped")
		}
	}()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}, nil
}
