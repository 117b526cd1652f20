package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Handler does one job. Returning nil acks the job (unless the handler
// settled it itself); an error naks it, and JetStream redelivers it after
// RetryDelay. A panic is recovered and treated as an error. ctx carries
// the trace context of the job's headers and is cancelled when a draining
// worker's grace period ends.
type Handler func(ctx context.Context, job *Job) error

// Worker fetches jobs from a component's durable consumer and runs a
// Handler on each. Make one with New; Run does it all for a main.
type Worker struct {
	cfg Config
	o   options
	nc  *nats.Conn
	js  jetstream.JetStream
	m   *metrics

	// running counts handlers that have not returned.
	running atomic.Int64
	// bound is what the worker took from its consumer when it bound it.
	bound atomic.Pointer[bound]
	// draining is set when Serve stops pulling (/readyz says so).
	draining atomic.Bool
}

// Run reads the Config from the environment (ConfigFromEnv), connects,
// serves the metrics listener when one is configured, and runs h on every
// job until ctx ends or the process receives SIGTERM or SIGINT; then it
// drains (see Worker.Serve) and closes the connection. It returns an
// error matching ErrEnvironment when the environment is incomplete.
func Run(ctx context.Context, h Handler, opts ...Option) error {
	cfg, err := ConfigFromEnv()
	if err != nil {
		return err
	}
	w, err := New(ctx, cfg, opts...)
	if err != nil {
		return err
	}
	defer w.Close()
	if addr := cmp.Or(w.o.metricsAddr, cfg.MetricsAddr); addr != "" {
		stop, err := serveMetrics(ctx, addr, w.o.registry)
		if err != nil {
			return err
		}
		defer stop()
		logger(ctx).Info().Str("addr", addr).Msg("serving metrics at /metrics")
	}
	if addr := cfg.HealthAddr; addr != "" {
		stop, err := w.serveHealth(ctx, addr)
		if err != nil {
			return err
		}
		defer stop()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return w.Serve(ctx, h)
}

// New connects to NATS as cfg says and registers the worker's metrics. It
// fails when the connection is refused or the metrics are registered
// already. Close the Worker when done.
func New(ctx context.Context, cfg Config, opts ...Option) (*Worker, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	o := newOptions(cfg.Grace, opts)
	m, err := newMetrics(o.registry)
	if err != nil {
		return nil, err
	}
	nc, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	js, err := newJetStream(nc, cfg.JSAPIPrefix)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("worker: jetstream: %w", err)
	}
	return &Worker{cfg: cfg, o: o, nc: nc, js: js, m: m}, nil
}

// newJetStream is the JetStream API at prefix ("": JetStream's own).
func newJetStream(nc *nats.Conn, prefix string) (jetstream.JetStream, error) {
	if prefix == "" {
		return jetstream.New(nc)
	}
	return jetstream.NewWithAPIPrefix(nc, prefix)
}

// Close flushes what the worker still has to send (naks, terms, and acks
// with UnconfirmedAcks; others are confirmed one by one) and closes the
// connection.
func (w *Worker) Close() {
	_ = w.nc.FlushTimeout(settleTimeout)
	w.nc.Close()
}

// Serve fetches jobs and runs h on each, at most MaxInFlight at once,
// until ctx ends. Then it drains: it stops pulling (a job that arrives
// after that is handed back at once), lets running handlers finish for the
// Grace period and settles them, and returns. It returns an error only
// when handlers were still running after the grace period: JetStream
// redelivers their jobs after the ack wait.
func (w *Worker) Serve(ctx context.Context, h Handler) error {
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	var wg sync.WaitGroup
	w.pull(ctx, func(msg jetstream.Msg, release func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer release()
			w.handle(handlerCtx, h, msg)
		}()
	})
	return w.drain(ctx, &wg, cancelHandlers)
}

// ErrGraceExpired is matched by Serve's error when handlers were still
// running after the grace period.
var ErrGraceExpired = errors.New("handlers still running after the grace period")
