package serve

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestAFencedWriteGivenUpWhileDisconnectedIsNeverSent: a leader whose NATS
// connection is down deletes a stream under its lease's fence; the delete
// fails (the caller gives up). When NATS comes back, the delete must not
// reach the server: the controller's connection buffers nothing while
// disconnected, so nothing is sent late on reconnect.
func TestAFencedWriteGivenUpWhileDisconnectedIsNeverSent(t *testing.T) {
	s := natstest.Start(t)
	ctx := zerolog.New(zerolog.NewTestWriter(t)).WithContext(testenv.Ctx(t, 60*time.Second))
	p := &Process{cfg: Config{NATS: s.BusConfig()}.WithDefaults()}
	p.metrics = newMetrics(p.loopView, p.latestRevision)
	stop, err := p.connect(ctx)
	testenv.Must(t, err)
	defer stop()

	const name = "precious"
	_, err = p.conn.JetStream().CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"precious.>"}})
	testenv.Must(t, err)
	l, err := p.leases.Acquire(ctx, "controller.test", "a", lease.Options{TTL: 3 * time.Second})
	testenv.Must(t, err)

	s.Shutdown()
	testenv.Eventually(t, 10*time.Second, func() error {
		if p.conn.Connected() {
			return errors.New("still connected")
		}
		return nil
	})
	fctx, cancel, err := l.Fence().Check(ctx)
	if err != nil {
		t.Fatalf("fence refused the write before its deadline: %v", err)
	}
	_, err = p.streams.Delete(fctx, name)
	cancel()
	if err == nil {
		t.Fatal("a stream delete succeeded while NATS was down")
	}
	if !bus.IsTransient(err) {
		t.Errorf("delete while disconnected: %v, want a transient error", err)
	}
	t.Logf("delete while disconnected: %v", err)

	s.Restart(t)
	testenv.Eventually(t, 10*time.Second, func() error {
		if !p.conn.Connected() {
			return errors.New("not reconnected")
		}
		return nil
	})
	// Requests of this connection after the reconnect are served after
	// anything it flushed on reconnecting.
	for range 5 {
		testenv.Must(t, p.conn.NATS().Flush())
		if _, err := p.conn.JetStream().Stream(ctx, name); err != nil {
			t.Fatalf("stream after reconnect: %v (a delete the caller gave up on was sent late)", err)
		}
	}
}
