package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// reconnectWait is the pause between reconnect attempts; the client tries
// for ever, re-reading the credentials file each time.
const reconnectWait = time.Second

// connect opens the NATS connection cfg describes. The credentials file
// is read again on every (re)connect, so credentials the controller
// re-mints into the mounted Secret are picked up without a restart; reply
// inboxes use cfg.InboxPrefix, the only inboxes minted credentials allow.
// It fails when the first connection is refused; later disconnects are
// retried for ever and logged.
func connect(ctx context.Context, cfg Config) (*nats.Conn, error) {
	log := logger(ctx)
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(reconnectWait),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn().Err(err).Msg("disconnected from NATS; reconnecting")
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info().Str("url", nc.ConnectedUrlRedacted()).Msg("reconnected to NATS") }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Error().Err(err).Msg("NATS error")
		}),
	}
	if cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if cfg.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(cfg.InboxPrefix))
	}
	if cfg.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.CAFile))
	}
	if cfg.CertFile != "" {
		opts = append(opts, nats.ClientCert(cfg.CertFile, cfg.KeyFile))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("worker: connect to NATS at %s: %w", cfg.URL, err)
	}
	return nc, nil
}

// logger is the zerolog logger ctx carries (disabled when none).
func logger(ctx context.Context) *zerolog.Logger { return zerolog.Ctx(ctx) }
