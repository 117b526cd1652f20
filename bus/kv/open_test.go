package kv_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestOpenAsksAgainWhenAnAnswerIsLost: a JetStream API request can go
// unanswered (a cluster changing its meta leader drops it). Open asks
// again after its own attempt's bound instead of waiting out the caller's
// deadline. Here a responder in place of JetStream drops the first
// request and answers the second "not found".
func TestOpenAsksAgainWhenAnAnswerIsLost(t *testing.T) {
	defer kv.SetOpenAttemptTimeout(200 * time.Millisecond)()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true})
	testenv.Must(t, err)
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	fake, err := nats.Connect(s.ClientURL())
	testenv.Must(t, err)
	defer fake.Close()
	var asked atomic.Int32
	_, err = fake.Subscribe("$JS.API.STREAM.INFO.KV_lost", func(m *nats.Msg) {
		if asked.Add(1) == 1 {
			return // lost
		}
		_ = m.Respond([]byte(`{"type":"io.nats.jetstream.api.v1.stream_info_response","error":{"code":404,"err_code":10059,"description":"stream not found"}}`))
	})
	testenv.Must(t, err)
	testenv.Must(t, fake.Flush())

	conn := natstest.BusConnect(t, bus.Config{URLs: []string{s.ClientURL()}}, nil)
	_, err = kv.Open(testenv.Ctx(t, 30*time.Second), conn, kv.Config{Bucket: "lost"}, kv.Existing)
	if !errors.Is(err, jetstream.ErrBucketNotFound) || asked.Load() != 2 {
		t.Fatalf("open after a lost answer: %v after %d requests, want not found after 2", err, asked.Load())
	}
}
