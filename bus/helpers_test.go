package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testenv"
)

// fastBackoff keeps reconnects and watch re-creation quick in tests.
var fastBackoff = bus.Backoff{Min: 20 * time.Millisecond, Max: 300 * time.Millisecond, Jitter: 0.2}

// configFor returns a bus.Config holding the test server's own
// credentials for its auth mode.
func configFor(s *testenv.NATSServer) bus.Config {
	c := s.Credentials()
	cfg := bus.Config{
		URLs:         []string{s.URL()},
		Name:         "bus-test",
		Token:        c.Token,
		User:         c.User,
		Password:     c.Password,
		NKeySeedFile: c.NKeySeedFile,
		CredsFile:    c.CredsFile,
		Reconnect:    fastBackoff,
	}
	if c.TLS != nil {
		cfg.TLSCAFile = c.TLS.CA
	}
	if c.ClientCert {
		cfg.TLSCertFile, cfg.TLSKeyFile = c.TLS.ClientCert, c.TLS.ClientKey
	}
	return cfg
}

// connect opens a bus connection with cfg and closes it when the test ends.
func connect(t *testing.T, cfg bus.Config, onState func(bus.StateChange)) *bus.Conn {
	t.Helper()
	c, err := bus.Connect(testCtx(t, 10*time.Second), cfg, onState)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// testCtx is a context that ends after d or with the test.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// openSpecs opens the default spec bucket on c.
func openSpecs(t *testing.T, c *bus.Conn) *bus.SpecStore {
	t.Helper()
	s, err := bus.OpenSpecStore(testCtx(t, 10*time.Second), c, bus.BucketConfig{})
	if err != nil {
		t.Fatalf("open spec store: %v", err)
	}
	return s
}

// consumers asks the server for the consumers of a stream.
func consumers(ctx context.Context, c *bus.Conn, stream string) ([]*jetstream.ConsumerInfo, error) {
	st, err := c.JetStream().Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	var out []*jetstream.ConsumerInfo
	list := st.ListConsumers(ctx)
	for info := range list.Info() {
		out = append(out, info)
	}
	return out, list.Err()
}

// kvStream is the stream behind a KV bucket.
func kvStream(bucket string) string { return "KV_" + bucket }
