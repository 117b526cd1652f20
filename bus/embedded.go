package bus

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbeddedConfig configures a nats-server run inside the process.
type EmbeddedConfig struct {
	// ServerName names the server (default "tinyctl").
	ServerName string
	// Host is the listen address for clients, monitoring and leafnodes
	// (default 127.0.0.1; use 0.0.0.0 to serve other machines).
	Host string
	// Port is the client port: 0 means 4222, -1 a random free port.
	Port int
	// MonitorPort is the HTTP monitoring port (/varz, /jsz): 0 disables
	// it, -1 picks a random free port.
	MonitorPort int
	// StoreDir holds JetStream data; required.
	StoreDir string
	// JetStreamDomain isolates this server's JetStream when it is a leaf
	// of a hub that has JetStream too.
	JetStreamDomain string
	// MaxMemory and MaxStore cap JetStream memory and disk (0: server
	// defaults).
	MaxMemory int64
	MaxStore  int64

	// Token, when set, is required from every client. Users, when set,
	// are the accepted user/password pairs. Set at most one of the two.
	Token string
	Users []EmbeddedUser

	// LeafnodePort accepts leafnode connections from other servers: 0
	// disables it, -1 picks a random free port.
	LeafnodePort int
	// LeafRemotes are hub servers this one connects to as a leafnode.
	LeafRemotes []LeafRemote

	// Logger receives the server's log; nil silences it.
	Logger server.Logger
}

// EmbeddedUser is a user/password pair accepted by an embedded server.
type EmbeddedUser struct {
	Name     string
	Password string
}

// LeafRemote is a hub an embedded server connects to as a leafnode.
type LeafRemote struct {
	// URLs of the hub's leafnode port, e.g. "nats-leaf://hub:7422".
	URLs []string
	// CredsFile authenticates to the hub (optional).
	CredsFile string
	// LocalOnly are subjects this server never sends to the hub, whatever
	// interest the hub shows: in a fleet, the status and heartbeat
	// subjects, which reach the hub only through its sourcing (see
	// package bus/fleet).
	LocalOnly []string
}

// Embedded is a running embedded nats-server.
type Embedded struct {
	srv *server.Server
}

// embeddedReadyTimeout bounds the wait for a server to accept clients; a
// server that cannot listen (port in use) never becomes ready.
const embeddedReadyTimeout = 30 * time.Second

// StartEmbedded starts a nats-server with JetStream and waits until it
// accepts clients. It fails on invalid config, or when the server is not
// ready within 30s (a port in use, say) or before ctx ends; the server is
// then shut down.
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Embedded, error) {
	ctx, cancel := context.WithTimeout(ctx, embeddedReadyTimeout)
	defer cancel()
	opts, err := cfg.serverOptions()
	if err != nil {
		return nil, err
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("bus: embedded server: %w", err)
	}
	if cfg.Logger != nil {
		srv.SetLoggerV2(cfg.Logger, false, false, false)
	}
	go srv.Start()
	for !srv.ReadyForConnections(100 * time.Millisecond) {
		if ctx.Err() != nil {
			srv.Shutdown()
			return nil, fmt.Errorf("bus: embedded server not ready: %w", ctx.Err())
		}
	}
	return &Embedded{srv: srv}, nil
}

// serverOptions turns cfg into nats-server options.
func (cfg EmbeddedConfig) serverOptions() (*server.Options, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("bus: embedded server needs a store dir")
	}
	if cfg.Token != "" && len(cfg.Users) > 0 {
		return nil, errors.New("bus: embedded server takes a token or users, not both")
	}
	host := cmp.Or(cfg.Host, "127.0.0.1")
	o := &server.Options{
		ServerName:         cmp.Or(cfg.ServerName, "tinyctl"),
		Host:               host,
		Port:               cmp.Or(cfg.Port, server.DEFAULT_PORT),
		JetStream:          true,
		StoreDir:           cfg.StoreDir,
		JetStreamDomain:    cfg.JetStreamDomain,
		JetStreamMaxMemory: cfg.MaxMemory,
		JetStreamMaxStore:  cfg.MaxStore,
		Authorization:      cfg.Token,
		NoLog:              cfg.Logger == nil,
		NoSigs:             true,
	}
	if cfg.MonitorPort != 0 {
		o.HTTPHost, o.HTTPPort = host, cfg.MonitorPort
	}
	for _, u := range cfg.Users {
		o.Users = append(o.Users, &server.User{Username: u.Name, Password: u.Password})
	}
	if cfg.LeafnodePort != 0 {
		// Leafnodes keep the address they were given (a Service, a load
		// balancer): the server does not advertise its own.
		o.LeafNode.Host, o.LeafNode.Port, o.LeafNode.NoAdvertise = host, cfg.LeafnodePort, true
	}
	for _, r := range cfg.LeafRemotes {
		remote := &server.RemoteLeafOpts{Credentials: r.CredsFile, DenyExports: r.LocalOnly}
		for _, raw := range r.URLs {
			u, err := url.Parse(raw)
			if err != nil {
				return nil, fmt.Errorf("bus: leaf remote %q: %w", raw, err)
			}
			remote.URLs = append(remote.URLs, u)
		}
		o.LeafNode.Remotes = append(o.LeafNode.Remotes, remote)
	}
	return o, nil
}

// ClientURL is the URL clients connect to.
func (e *Embedded) ClientURL() string { return e.srv.ClientURL() }

// MonitorURL is the base URL of the monitoring endpoint, or "" when it is
// disabled.
func (e *Embedded) MonitorURL() string {
	addr := e.srv.MonitorAddr()
	if addr == nil {
		return ""
	}
	return "http://" + net.JoinHostPort(addr.IP.String(), strconv.Itoa(addr.Port))
}

// LeafnodeURL is the URL other servers use to connect as leafnodes, or ""
// when leafnode connections are disabled.
func (e *Embedded) LeafnodeURL() string {
	v, err := e.srv.Varz(nil)
	if err != nil || v.LeafNode.Port == 0 {
		return ""
	}
	return "nats-leaf://" + net.JoinHostPort(v.LeafNode.Host, strconv.Itoa(v.LeafNode.Port))
}

// Server returns the underlying server, for inspection.
func (e *Embedded) Server() *server.Server { return e.srv }

// Shutdown stops the server (clients are disconnected, JetStream is
// flushed to disk) and waits until it has stopped, or returns ctx's error
// if ctx ends first (the shutdown then completes in the background).
func (e *Embedded) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("bus: embedded server shutdown: %w", ctx.Err())
	}
}
