package bus_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// stateLog records reported connection states.
type stateLog struct {
	mu     sync.Mutex
	states []bus.State
}

func (l *stateLog) record(sc bus.StateChange) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.states = append(l.states, sc.State)
}

func (l *stateLog) saw(s bus.State) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, got := range l.states {
		if got == s {
			return nil
		}
	}
	return fmt.Errorf("state %s not reported; got %v", s, l.states)
}

func TestConnectReportsStatesAndNeverGivesUpReconnecting(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	var log stateLog
	c := natstest.BusConnect(t, s.BusConfig(), log.record)
	testenv.Must(t, log.saw(bus.StateConnected))
	if got := c.NATS().Opts.MaxReconnect; got != -1 {
		t.Fatalf("max reconnects %d, want -1 (never give up)", got)
	}

	s.Shutdown()
	testenv.Eventually(t, 5*time.Second, func() error { return log.saw(bus.StateDisconnected) })
	s.Restart(t)
	testenv.Eventually(t, 5*time.Second, func() error { return log.saw(bus.StateReconnected) })
	if !c.Connected() {
		t.Fatal("reported reconnected but not connected")
	}
	c.Close()
	testenv.Eventually(t, 5*time.Second, func() error { return log.saw(bus.StateClosed) })
}

func TestConnectRetriesTheFirstConnectUntilTheServerIsUp(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	s.Shutdown()
	var log stateLog
	connected := make(chan error, 1)
	go func() {
		c, err := bus.Connect(testenv.Ctx(t, 15*time.Second), s.BusConfig(), log.record)
		if err == nil {
			c.Close()
		}
		connected <- err
	}()
	testenv.Eventually(t, 5*time.Second, func() error { return log.saw(bus.StateDisconnected) })
	s.Restart(t)
	if err := <-connected; err != nil {
		t.Fatalf("connect after the server came up: %v", err)
	}
}

func TestConnectStopsRetryingWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t)
	s.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := bus.Connect(ctx, s.BusConfig(), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
}

func TestConnectRejectsAmbiguousCredentials(t *testing.T) {
	t.Parallel()
	cases := map[string]bus.Config{
		"token and user":         {Token: "t", User: "u", Password: "p"},
		"creds and nkey":         {CredsFile: "a.creds", NKeySeedFile: "a.nk"},
		"certificate no key":     {TLSCertFile: "client.pem"},
		"missing nkey seed file": {NKeySeedFile: "/nonexistent/seed.nk"},
	}
	for name, cfg := range cases {
		if _, err := bus.Connect(context.Background(), cfg, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDelayGrowsToItsCapWithBoundedJitter(t *testing.T) {
	b := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Cap: time.Second, Jitter: 0.2}
	cases := []struct {
		attempt int
		base    time.Duration
	}{{0, 100 * time.Millisecond}, {1, 200 * time.Millisecond}, {3, 800 * time.Millisecond}, {4, time.Second}, {50, time.Second}}
	for _, tc := range cases {
		for range 100 {
			d := bus.Delay(b, tc.attempt)
			if lo, hi := tc.base, tc.base*12/10; d < lo || d > hi {
				t.Fatalf("attempt %d: delay %s outside [%s, %s]", tc.attempt, d, lo, hi)
			}
		}
	}
}
