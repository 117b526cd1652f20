package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// FetchAndAck fetches up to n jobs from cons within 5 s, double-acks each
// and returns how many there were and the batch's error.
func FetchAndAck(tb testing.TB, ctx context.Context, cons jetstream.Consumer, n int) (int, error) {
	tb.Helper()
	batch, err := cons.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		tb.Fatal(err)
	}
	got := 0
	for m := range batch.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			tb.Fatal(err)
		}
		got++
	}
	return got, batch.Error()
}
