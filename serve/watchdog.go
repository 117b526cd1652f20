package serve

import (
	"context"
	"net"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/bus"
)

// serverWatchdog moves the NATS connection to another server when
// JetStream has not answered through the current one for a lease TTL. A
// server cut off from the rest of its JetStream cluster (a network
// partition, a route down) keeps its clients connected while it can store
// nothing, and the NATS client reconnects only when the connection itself
// breaks: a controller connected there would neither lead nor let its
// standby on the same server lead, for as long as the partition lasts.
// The heartbeat is the probe: it is written every third of its TTL, by a
// leader and a standby alike.
type serverWatchdog struct {
	nc    *nats.Conn
	after time.Duration
	now   func() time.Time

	lastOK, lastMove time.Time
}

func newServerWatchdog(nc *nats.Conn, after time.Duration) *serverWatchdog {
	w := &serverWatchdog{nc: nc, after: after, now: time.Now}
	w.lastOK = w.now()
	return w
}

// beat records a heartbeat's outcome, and reconnects elsewhere when
// JetStream has failed through this server (transiently: no answer, no
// stream leader, JetStream unavailable) for longer than after, at most
// once per after, and only when a reconnect may reach another server
// (canMove).
func (w *serverWatchdog) beat(ctx context.Context, err error) {
	now := w.now()
	if err == nil {
		w.lastOK = now
		return
	}
	if !bus.IsTransient(err) || now.Sub(w.lastOK) < w.after || now.Sub(w.lastMove) < w.after ||
		!w.nc.IsConnected() || !canMove(w.nc.Servers(), w.nc.ConnectedUrl()) {
		return
	}
	w.lastMove = now
	zerolog.Ctx(ctx).Warn().Err(err).Str("server", w.nc.ConnectedUrlRedacted()).Dur("failingFor", now.Sub(w.lastOK)).
		Msg("JetStream has not answered through this NATS server; reconnecting to another")
	if err := w.nc.ForceReconnect(); err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Msg("reconnect to another NATS server failed")
	}
}

// canMove reports whether a reconnect may reach another server: the client
// knows several, or its one URL is a name (a Kubernetes Service in front
// of a JetStream cluster: a new connection may land on another pod). An
// address or localhost always leads back to the same server.
func canMove(servers []string, connected string) bool {
	if len(servers) >= 2 {
		return true
	}
	u, err := url.Parse(connected)
	if err != nil {
		return false
	}
	host := u.Hostname()
	return host != "" && host != "localhost" && net.ParseIP(host) == nil
}
