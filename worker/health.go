package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Probes the kubelet makes of a worker (render sets them when a component
// asks for the library's probes):
//
//   - /healthz answers 200 while the NATS connection is not closed for
//     good: the client reconnects on its own, so a worker that lost its
//     server for a while is alive and restarting it would not help, but
//     one whose connection is closed never pulls a job again.
//   - /readyz answers 200 while the worker is connected and not draining:
//     a pod that cannot reach NATS, or is stopping, is not counted as
//     available, and a rollout waits for the new pods to connect.
func (w *Worker) health(mux *http.ServeMux) {
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) {
		if w.nc.IsClosed() {
			http.Error(rw, "the NATS connection is closed", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(rw, "ok")
	})
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, _ *http.Request) {
		switch {
		case w.draining.Load():
			http.Error(rw, "draining", http.StatusServiceUnavailable)
		case !w.nc.IsConnected():
			http.Error(rw, "not connected to NATS ("+w.nc.Status().String()+")", http.StatusServiceUnavailable)
		default:
			fmt.Fprintln(rw, "ok")
		}
	})
}

// serveHealth serves the probes on addr until stop is called. It fails at
// once when addr cannot be listened on.
func (w *Worker) serveHealth(ctx context.Context, addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("worker health listener %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	w.health(mux)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger(ctx).Error().Err(err).Msg("health listener stopped")
		}
	}()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}, nil
}
