package events

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/bus"
)

// Retention defaults of the events stream. None of them is a byte limit:
// JetStream sets a stream's byte limit aside from the store when the
// stream is created, full or empty, and events must not take room
// components need. Their size is bounded by counts instead (an event is a
// few hundred bytes; MaxEventBytes at most).
const (
	// DefaultMaxAge is how long an event is kept.
	DefaultMaxAge = 24 * time.Hour
	// DefaultPerComponent is how many events of one component in one
	// cluster are kept (the stream's max messages per subject).
	DefaultPerComponent = 100
	// DefaultMaxEvents bounds the whole stream; the oldest events go
	// first.
	DefaultMaxEvents = 100_000
	// MaxEventBytes is the largest event the stream stores (Publisher
	// shortens a longer message to fit).
	MaxEventBytes = 8 << 10
)

// StreamConfig are the settings the events stream is created with. Zero
// fields take the defaults above; zero Replicas means 1.
type StreamConfig struct {
	Replicas     int
	MaxAge       time.Duration
	PerComponent int64
	MaxEvents    int64
}

// Config is the JetStream configuration of the events stream.
func (c StreamConfig) Config() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              event.Stream,
		Description:       "tinyctl: what controllers did to components, and why (docs/events.md)",
		Subjects:          []string{event.Subjects + ".>"},
		Retention:         jetstream.LimitsPolicy,
		Discard:           jetstream.DiscardOld,
		MaxAge:            cmp.Or(c.MaxAge, DefaultMaxAge),
		MaxMsgsPerSubject: cmp.Or(c.PerComponent, DefaultPerComponent),
		MaxMsgs:           cmp.Or(c.MaxEvents, DefaultMaxEvents),
		MaxBytes:          -1,
		MaxMsgSize:        MaxEventBytes,
		Storage:           jetstream.FileStorage,
		Replicas:          cmp.Or(c.Replicas, 1),
	}
}

// Ensure creates the events stream when it does not exist. One that does
// is left as it is: an operator may have changed its retention (nats
// stream edit tinyctl-events).
func Ensure(ctx context.Context, c *bus.Conn, cfg StreamConfig) error {
	patterns := []string{"$JS.API.STREAM.CREATE." + event.Stream}
	err := c.Guarded(ctx, patterns, func(ctx context.Context) error {
		_, err := c.JetStream().CreateStream(ctx, cfg.Config())
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return nil
		}
		return err
	})
	if err != nil {
		return bus.Classify("create stream "+event.Stream, err)
	}
	return nil
}
