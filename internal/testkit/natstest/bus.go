package natstest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// FastBackoff keeps reconnects and watch re-creation quick in tests.
var FastBackoff = wait.Backoff{Duration: 20 * time.Millisecond, Factor: 2, Jitter: 0.2, Cap: 300 * time.Millisecond}

// BusConfig returns a bus.Config that reaches s with its own credentials
// for its auth mode, and reconnects with FastBackoff.
func (s *Server) BusConfig() bus.Config {
	c := s.Credentials()
	cfg := bus.Config{
		URLs:         []string{s.URL()},
		Name:         "test",
		Token:        c.Token,
		User:         c.User,
		Password:     c.Password,
		NKeySeedFile: c.NKeySeedFile,
		CredsFile:    c.CredsFile,
		Reconnect:    FastBackoff,
	}
	if c.TLS != nil {
		cfg.TLSCAFile = c.TLS.CA
	}
	if c.ClientCert {
		cfg.TLSCertFile, cfg.TLSKeyFile = c.TLS.ClientCert, c.TLS.ClientKey
	}
	return cfg
}

// BusConnect opens a bus connection with cfg and closes it when the test
// ends; it fails the test when the connection cannot be made in 10s.
func BusConnect(tb testing.TB, cfg bus.Config, onState func(bus.StateChange)) *bus.Conn {
	tb.Helper()
	c, err := bus.Connect(testenv.Ctx(tb, 10*time.Second), cfg, onState)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// OpenSpecs opens the default spec bucket on c, creating it.
func OpenSpecs(tb testing.TB, c *bus.Conn) *specs.Store {
	tb.Helper()
	s, err := specs.Open(testenv.Ctx(tb, 10*time.Second), c, specs.Config{}, kv.Ensure)
	if err != nil {
		tb.Fatalf("open spec store: %v", err)
	}
	return s
}

// WatchRecorder collects a watcher's events in the background.
type WatchRecorder struct {
	mu     sync.Mutex
	events []kv.Event
}

// RecordWatch starts collecting w's events until its channel closes.
func RecordWatch(w *kv.Watcher) *WatchRecorder {
	r := &WatchRecorder{}
	go func() {
		for ev := range w.Events() {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		}
	}()
	return r
}

// Lines renders the events as "op key=value" (or "initial-done").
func (r *WatchRecorder) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.events))
	for _, ev := range r.events {
		if ev.InitialDone {
			out = append(out, "initial-done")
			continue
		}
		out = append(out, fmt.Sprintf("%s %s=%s", ev.Op, ev.Key, ev.Value))
	}
	return out
}

// WaitFor waits until the recorded lines equal want.
func (r *WatchRecorder) WaitFor(t testing.TB, within time.Duration, want ...string) {
	t.Helper()
	testenv.Eventually(t, within, func() error {
		if got := r.Lines(); !slices.Equal(got, want) {
			return fmt.Errorf("events:\n got  %v\n want %v", got, want)
		}
		return nil
	})
}
