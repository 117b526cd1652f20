package natstest

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/identity"
)

// natsReadyTimeout bounds how long a test waits for a server to accept
// clients after Start.
const natsReadyTimeout = 15 * time.Second

// Server is an embedded nats-server with JetStream, started by NATS for
// one test. Its store lives in the test's temp dir, so Restart keeps
// JetStream state; its client and monitoring ports stay the same across
// restarts, so clients reconnect.
type Server struct {
	cfg      natsConfig
	storeDir string
	creds    Credentials
	chain    *jwtChain
	credsDir string

	mu          sync.Mutex
	srv         *server.Server
	port        int
	monitorPort int
}

// NATS starts an embedded nats-server with JetStream on random loopback
// client and monitoring ports, configured by opts (auth mode, TLS), waits
// until it accepts connections and shuts it down when the test ends. It
// fails the test if the server cannot start.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := &Server{storeDir: tb.TempDir(), credsDir: tb.TempDir(), port: -1, monitorPort: -1}
	for _, opt := range opts {
		opt(&s.cfg)
	}
	s.makeCredentials(tb)
	s.start(tb)
	tb.Cleanup(s.Shutdown)
	return s
}

// makeCredentials generates the identities of the server's auth mode.
func (s *Server) makeCredentials(tb testing.TB) {
	tb.Helper()
	switch s.cfg.auth {
	case AuthToken:
		s.creds.Token = randomToken(tb)
	case AuthUserPassword:
		s.creds.User, s.creds.Password = "tinyctl", randomToken(tb)
	case AuthNKey:
		s.creds.NKeySeedFile, s.creds.NKeyPublic = NewNKeySeedFile(tb, s.credsDir)
	case AuthJWT:
		s.chain = newJWTChain(tb)
		s.creds.CredsFile = s.chain.userCreds(tb, s.credsDir, "tinyctl", Permissions{})
	}
	if s.cfg.tls {
		files := WriteTLSFiles(tb)
		s.creds.TLS = &files
		s.creds.ClientCert = s.cfg.mtls
	}
}

// options builds fresh server options; ports are -1 (random) until the
// first start has fixed them.
func (s *Server) options(tb testing.TB) *server.Options {
	tb.Helper()
	o := &server.Options{
		ServerName:         "tinyctl-test",
		Host:               "127.0.0.1",
		Port:               s.port,
		HTTPHost:           "127.0.0.1",
		HTTPPort:           s.monitorPort,
		JetStream:          true,
		StoreDir:           s.storeDir,
		JetStreamMaxMemory: 256 << 20,
		// Streams reserve their byte caps (1 GiB by default) from this;
		// it is bookkeeping, not disk, so leave room for many.
		JetStreamMaxStore: 1 << 40,
		NoLog:             true,
		NoSigs:            true,
	}
	s.applyAuth(tb, o)
	if s.cfg.tls {
		s.applyTLS(tb, o)
	}
	return o
}

func (s *Server) applyAuth(tb testing.TB, o *server.Options) {
	tb.Helper()
	switch s.cfg.auth {
	case AuthToken:
		o.Authorization = s.creds.Token
	case AuthUserPassword:
		own := User{Name: s.creds.User, Password: s.creds.Password}
		o.Users = serverUsers(append([]User{own}, s.cfg.users...))
	case AuthNKey:
		o.Nkeys = []*server.NkeyUser{{Nkey: s.creds.NKeyPublic}}
	case AuthJWT:
		s.chain.apply(tb, o)
	}
}

func (s *Server) applyTLS(tb testing.TB, o *server.Options) {
	tb.Helper()
	files := s.creds.TLS
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: files.ServerCert,
		KeyFile:  files.ServerKey,
		CaFile:   files.CA,
		Verify:   s.cfg.mtls,
		Timeout:  2,
	})
	if err != nil {
		tb.Fatalf("testenv: nats tls config: %v", err)
	}
	o.TLSConfig, o.TLS, o.TLSVerify, o.TLSTimeout = tc, true, s.cfg.mtls, 2
}

// start runs a server and records the ports it got.
func (s *Server) start(tb testing.TB) {
	tb.Helper()
	srv, err := server.NewServer(s.options(tb))
	if err != nil {
		tb.Fatalf("testenv: new nats server: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(natsReadyTimeout) {
		srv.Shutdown()
		tb.Fatalf("testenv: nats server not ready within %s", natsReadyTimeout)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srv = srv
	s.port = srv.Addr().(*net.TCPAddr).Port
	s.monitorPort = srv.MonitorAddr().Port
}

// URL is the client URL: tls:// when the server speaks TLS, else nats://.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	scheme := "nats"
	if s.cfg.tls {
		scheme = "tls"
	}
	return fmt.Sprintf("%s://127.0.0.1:%d", scheme, s.port)
}

// MonitorURL is the base URL of the HTTP monitoring endpoint (/jsz, /varz).
func (s *Server) MonitorURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("http://127.0.0.1:%d", s.monitorPort)
}

// Server is the running nats-server, for server-side inspection such as
// Jsz. It is a new value after Restart.
func (s *Server) Server() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

// Credentials are the server's own valid credentials for its auth mode.
func (s *Server) Credentials() Credentials { return s.creds }

// IssueUserCreds writes a creds file for another user of the server's
// JetStream account, limited by perms. It fails the test unless the server
// runs WithJWT.
func (s *Server) IssueUserCreds(tb testing.TB, name string, perms Permissions) string {
	tb.Helper()
	if s.chain == nil {
		tb.Fatalf("testenv: IssueUserCreds needs a server started WithJWT")
	}
	return s.chain.userCreds(tb, s.credsDir, name, perms)
}

// ClientOptions are the nats.go options that authenticate as the server's
// own user and trust (and, for mutual TLS, present) its certificates.
func (s *Server) ClientOptions(tb testing.TB) []nats.Option {
	tb.Helper()
	var opts []nats.Option
	switch s.cfg.auth {
	case AuthToken:
		opts = append(opts, nats.Token(s.creds.Token))
	case AuthUserPassword:
		opts = append(opts, nats.UserInfo(s.creds.User, s.creds.Password))
	case AuthNKey:
		opt, err := nats.NkeyOptionFromSeed(s.creds.NKeySeedFile)
		if err != nil {
			tb.Fatalf("testenv: nkey option: %v", err)
		}
		opts = append(opts, opt)
	case AuthJWT:
		opts = append(opts, nats.UserCredentials(s.creds.CredsFile))
	}
	if s.creds.TLS != nil {
		opts = append(opts, nats.RootCAs(s.creds.TLS.CA))
	}
	if s.creds.ClientCert {
		opts = append(opts, nats.ClientCert(s.creds.TLS.ClientCert, s.creds.TLS.ClientKey))
	}
	return opts
}

// Connect opens a client with the server's own credentials followed by
// extra options (which may override them) and closes it when the test
// ends. It fails the test if the connection is refused.
func (s *Server) Connect(tb testing.TB, extra ...nats.Option) *nats.Conn {
	tb.Helper()
	opts := append([]nats.Option{nats.Name(tb.Name())}, s.ClientOptions(tb)...)
	nc, err := nats.Connect(s.URL(), append(opts, extra...)...)
	if err != nil {
		tb.Fatalf("testenv: connect to %s: %v", s.URL(), err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// Restart shuts the server down and starts it again on the same client and
// monitoring ports with the same store, so JetStream state survives and
// clients reconnect. It fails the test if the server does not come back.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Shutdown()
	s.start(tb)
}

// Shutdown stops the server and waits until it has stopped. Calling it on a
// stopped server does nothing.
func (s *Server) Shutdown() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return
	}
	srv.Shutdown()
	srv.WaitForShutdown()
}

// Keys returns the operator-mode keys of a server started WithJWT; it
// fails the test for any other mode.
func (s *Server) Keys(tb testing.TB) identity.Keys {
	tb.Helper()
	if s.chain == nil {
		tb.Fatal("natstest: Keys needs a server started WithJWT")
	}
	return s.chain.keys
}
