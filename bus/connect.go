package bus

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Config says where NATS is and who to be there. Set at most one of
// Token, User/Password, NKeySeedFile and CredsFile. TLS is used when a URL
// has the tls:// scheme or any TLS file is set.
type Config struct {
	// URLs are the servers to try, e.g. "nats://nats.tinyctl:4222".
	URLs []string
	// Name is the connection name the server shows in its monitoring.
	Name string

	Token    string
	User     string
	Password string
	// NKeySeedFile is a file holding an nkey user seed ("SU...").
	NKeySeedFile string
	// CredsFile is a .creds file holding a user JWT and its nkey seed.
	CredsFile string

	// TLSCAFile is a PEM bundle of the CAs to trust instead of the system's.
	TLSCAFile string
	// TLSCertFile and TLSKeyFile are a client certificate for mutual TLS.
	TLSCertFile string
	TLSKeyFile  string

	// JetStreamDomain is the JetStream domain to use: a leaf cluster's own,
	// or the hub's from a leaf (empty: the server's).
	JetStreamDomain string
	// Options are more client options, applied after those above: a nats
	// CLI context's (natscontext.Context.NATSOptions), say.
	Options []nats.Option

	// Reconnect spaces reconnect attempts (and the attempts of the first
	// connect). Zero fields take DefaultBackoff's values.
	Reconnect wait.Backoff
	// ReconnectBufSize is how many bytes of publishes are buffered while
	// disconnected (default 8 MiB; -1 disables buffering: a publish or
	// request made while disconnected then fails at once with
	// nats.ErrReconnectBufExceeded, a transient error).
	ReconnectBufSize int
	// ConnectTimeout bounds one dial and handshake (default 5s).
	ConnectTimeout time.Duration
	// PingInterval is how often the client checks a quiet server (default
	// 15s); two unanswered pings count as a disconnect.
	PingInterval time.Duration
}

// Defaults of Config.
const (
	DefaultReconnectBufSize = 8 << 20
	DefaultConnectTimeout   = 5 * time.Second
	DefaultPingInterval     = 15 * time.Second
)

// Connect opens a connection described by cfg. The first connect is
// retried with cfg.Reconnect backoff until it succeeds or ctx is done;
// refused credentials or a failed TLS handshake return ErrAuthentication at
// once. Once connected, the client reconnects forever: it never closes by
// itself. onState (may be nil) is called on every state change, in order
// and never concurrently, for logs, metrics and readiness; it must not
// block.
func Connect(ctx context.Context, cfg Config, onState func(StateChange)) (*Conn, error) {
	c := newConn(onState)
	opts, err := cfg.natsOptions(c)
	if err != nil {
		return nil, err
	}
	url := strings.Join(cfg.URLs, ",")
	if url == "" {
		url = nats.DefaultURL
	}
	for attempt := 0; ; attempt++ {
		nc, err := nats.Connect(url, opts...)
		if err == nil {
			return c.bind(nc, cfg.JetStreamDomain)
		}
		if permanent := connectErrorIsPermanent(err); permanent != nil {
			return nil, fmt.Errorf("bus: connect to %s: %w", url, permanent)
		}
		c.report(StateChange{State: StateDisconnected, Err: err})
		if !SleepCtx(ctx, Delay(cfg.Reconnect, attempt)) {
			return nil, fmt.Errorf("bus: connect to %s: %w (last error: %w)", url, ctx.Err(), err)
		}
	}
}

// connectErrorIsPermanent returns ErrAuthentication wrapping err when
// retrying the same config cannot succeed, else nil: refused credentials,
// a server certificate we do not trust, or a TLS alert from the server
// (which refused our client certificate, or its absence).
func connectErrorIsPermanent(err error) error {
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var opErr *net.OpError
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired),
		errors.Is(err, nats.ErrAuthRevoked), errors.Is(err, nats.ErrAccountAuthExpired),
		errors.Is(err, nats.ErrTLS), errors.As(err, &certErr), errors.As(err, &unknownCA),
		errors.As(err, &opErr) && opErr.Op == "remote error":
		return fmt.Errorf("%w: %w", ErrAuthentication, err)
	}
	return nil
}

// natsOptions turns cfg into client options wired to c's handlers.
func (cfg Config) natsOptions(c *Conn) ([]nats.Option, error) {
	auth, err := cfg.authOptions()
	if err != nil {
		return nil, err
	}
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.MaxReconnects(-1),
		nats.IgnoreAuthErrorAbort(),
		nats.CustomReconnectDelay(func(n int) time.Duration { return Delay(cfg.Reconnect, n) }),
		nats.ReconnectBufSize(cmp.Or(cfg.ReconnectBufSize, DefaultReconnectBufSize)),
		nats.Timeout(cmp.Or(cfg.ConnectTimeout, DefaultConnectTimeout)),
		nats.PingInterval(cmp.Or(cfg.PingInterval, DefaultPingInterval)),
		nats.MaxPingsOutstanding(2),
		nats.DisconnectErrHandler(c.onDisconnect),
		nats.ReconnectHandler(c.onReconnect),
		nats.ClosedHandler(c.onClosed),
		nats.ErrorHandler(c.onAsyncError),
	}
	opts = append(opts, auth...)
	return append(opts, cfg.Options...), nil
}

// authOptions returns the credential and TLS options of cfg.
func (cfg Config) authOptions() ([]nats.Option, error) {
	var opts []nats.Option
	set := 0
	if cfg.Token != "" {
		set++
		opts = append(opts, nats.Token(cfg.Token))
	}
	if cfg.User != "" || cfg.Password != "" {
		set++
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
	}
	if cfg.NKeySeedFile != "" {
		set++
		opt, err := nats.NkeyOptionFromSeed(cfg.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("bus: nkey seed %s: %w", cfg.NKeySeedFile, err)
		}
		opts = append(opts, opt)
	}
	if cfg.CredsFile != "" {
		set++
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if set > 1 {
		return nil, errors.New("bus: config sets more than one of token, user/password, nkey seed and creds file")
	}
	if cfg.TLSCAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCAFile))
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == "") {
		return nil, errors.New("bus: config needs both a TLS client certificate and its key, or neither")
	}
	if cfg.TLSCertFile != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCertFile, cfg.TLSKeyFile))
	}
	return opts, nil
}
