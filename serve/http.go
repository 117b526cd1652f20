package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

// listeners are the bound metrics, health and profiling addresses (nil
// when disabled; one listener serves metrics and health when their
// addresses are equal).
type listeners struct {
	metrics, health, pprof net.Listener
}

// disabled is the address that turns a server off.
const disabled = "-"

// listen binds the metrics, health and profiling addresses (profiling only
// when asked for: "" is off too).
func listen(metricsAddr, healthAddr, pprofAddr string) (listeners, error) {
	var ls listeners
	var err error
	if healthAddr != disabled {
		if ls.health, err = net.Listen("tcp", healthAddr); err != nil {
			return ls, fmt.Errorf("listen %s: %w", healthAddr, err)
		}
	}
	if metricsAddr != disabled && metricsAddr != healthAddr {
		if ls.metrics, err = net.Listen("tcp", metricsAddr); err != nil {
			ls.close()
			return ls, fmt.Errorf("listen %s: %w", metricsAddr, err)
		}
	}
	if pprofAddr != "" && pprofAddr != disabled {
		if ls.pprof, err = net.Listen("tcp", pprofAddr); err != nil {
			ls.close()
			return ls, fmt.Errorf("listen %s: %w", pprofAddr, err)
		}
	}
	return ls, nil
}

func (ls listeners) close() {
	for _, l := range []net.Listener{ls.metrics, ls.health, ls.pprof} {
		if l != nil {
			_ = l.Close()
		}
	}
}

// addrs returns the bound addresses, the health one for metrics when they
// share a listener.
func (ls listeners) addrs() (metrics, health string) {
	if ls.health != nil {
		health = ls.health.Addr().String()
	}
	switch {
	case ls.metrics != nil:
		metrics = ls.metrics.Addr().String()
	case ls.health != nil:
		metrics = health
	}
	return metrics, health
}

// servers are the running metrics and health servers.
type servers []*http.Server

func (s servers) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, srv := range s {
		_ = srv.Shutdown(ctx)
	}
}

// serveHTTP serves /metrics and /healthz, /readyz on the bound listeners
// (/metrics on the health listener too when they share an address).
func (p *Process) serveHTTP(ctx context.Context) servers {
	metricsMux, healthMux := http.NewServeMux(), http.NewServeMux()
	metrics := promhttp.HandlerFor(p.metrics.reg, promhttp.HandlerOpts{})
	metricsMux.Handle("GET /metrics", metrics)
	healthMux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	healthMux.HandleFunc("GET /readyz", p.readyz)
	if p.cfg.MetricsAddr == p.cfg.HealthAddr {
		healthMux.Handle("GET /metrics", metrics)
	}
	var out servers
	for _, s := range []struct {
		l   net.Listener
		mux *http.ServeMux
	}{{p.listeners.metrics, metricsMux}, {p.listeners.health, healthMux}, {p.listeners.pprof, profiling()}} {
		if s.l != nil {
			out = append(out, serve(ctx, s.l, s.mux))
		}
	}
	return out
}

// profiling serves Go's runtime profiles (net/http/pprof): CPU, heap,
// goroutines, execution traces.
func profiling() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}

func serve(ctx context.Context, l net.Listener, h http.Handler) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	zerolog.Ctx(ctx).Info().Str("addr", l.Addr().String()).Msg("http listening")
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			zerolog.Ctx(ctx).Error().Err(err).Str("addr", l.Addr().String()).Msg("http server stopped")
		}
	}()
	return srv
}

// readyz answers 200 when the process is Ready in its role, 503 otherwise.
// A leader adds a line for each optional kind it runs without because the
// API server refuses to let it list that kind.
func (p *Process) readyz(w http.ResponseWriter, _ *http.Request) {
	role := "standby"
	if p.leader.Load() {
		role = "leader"
	}
	if !p.Ready() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready (%s)\n", role)
		return
	}
	fmt.Fprintf(w, "ready (%s)\n", role)
	if c := p.loop.Load(); c != nil && p.leader.Load() {
		for _, u := range c.Unwatched() {
			fmt.Fprintf(w, "not watching %s\n", u)
		}
	}
}
