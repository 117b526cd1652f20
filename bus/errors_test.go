package bus_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
)

// TestNotNowErrorsAreTransient: what a JetStream cluster answers while it
// elects a stream leader (no response from the stream, no responders) is
// retried, wrapped or not; an unknown error is not.
func TestNotNowErrorsAreTransient(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"no response from stream": {fmt.Errorf("write controller.test: %w", jetstream.ErrNoStreamResponse), true},
		"no responders":           {nats.ErrNoResponders, true},
		"timeout":                 {nats.ErrTimeout, true},
		"something else":          {errors.New("bad request"), false},
	} {
		if got := bus.IsTransient(tc.err); got != tc.want {
			t.Errorf("%s: IsTransient = %v, want %v", name, got, tc.want)
		}
	}
}
