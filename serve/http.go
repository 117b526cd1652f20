package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

// servers are the metrics and health listeners.
type servers []*http.Server

func (s servers) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, srv := range s {
		_ = srv.Shutdown(ctx)
	}
}

// serveHTTP starts /metrics on MetricsAddr and /healthz, /readyz on
// HealthAddr (one server when both are the same address).
func (p *process) serveHTTP(ctx context.Context) (servers, error) {
	metricsMux, healthMux := http.NewServeMux(), http.NewServeMux()
	metricsMux.Handle("GET /metrics", promhttp.HandlerFor(p.metrics.reg, promhttp.HandlerOpts{}))
	healthMux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	healthMux.HandleFunc("GET /readyz", p.readyz)
	if p.cfg.MetricsAddr == p.cfg.HealthAddr {
		healthMux.Handle("GET /metrics", metricsMux)
		metricsMux = nil
	}
	var out servers
	for _, s := range []struct {
		addr string
		mux  *http.ServeMux
	}{{p.cfg.MetricsAddr, metricsMux}, {p.cfg.HealthAddr, healthMux}} {
		if s.mux == nil || s.addr == "-" {
			continue
		}
		srv, err := listen(ctx, s.addr, s.mux)
		if err != nil {
			out.close()
			return nil, err
		}
		out = append(out, srv)
	}
	return out, nil
}

func listen(ctx context.Context, addr string, h http.Handler) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	zerolog.Ctx(ctx).Info().Str("addr", ln.Addr().String()).Msg("http listening")
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			zerolog.Ctx(ctx).Error().Err(err).Str("addr", addr).Msg("http server stopped")
		}
	}()
	return srv, nil
}

// readyz: a leader is ready once its loop has reconciled the initial
// values and synced its informers; a standby once NATS is connected.
func (p *process) readyz(w http.ResponseWriter, _ *http.Request) {
	var ready bool
	var role string
	if p.leader.Load() {
		role = "leader"
		c := p.loop.Load()
		ready = c != nil && c.Ready()
	} else {
		role = "standby"
		ready = p.connected.Load()
	}
	if !ready {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready (%s)\n", role)
		return
	}
	fmt.Fprintf(w, "ready (%s)\n", role)
}
