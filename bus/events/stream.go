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

// Retention defaults of the events stream.
const (
	// DefaultMaxAge is how long an event is kept.
	DefaultMaxAge = 24 * time.Hour
	// DefaultPerComponent is how many events of one component in one
	// cluster are kept (the stream's max messages per subject).
	DefaultPerComponent = 100
	// DefaultMaxBytes bounds the whole stream; the oldest events go first.
	DefaultMaxBytes = 256 << 20
)

// StreamConfig are the settings the events stream is created with. Zero
// fields take the defaults above; zero Replicas means 1.
type StreamConfig struct {
	Replicas     int
	MaxAge       time.Duration
	PerComponent int64
	MaxBytes     int64
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
		MaxBytes:          cmp.Or(c.MaxBytes, DefaultMaxBytes),
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
