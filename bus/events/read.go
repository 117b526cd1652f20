package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/bus"
)

// ReadOptions select the events Read delivers.
type ReadOptions struct {
	// Filter is the subject to read (event.Filter); empty reads all.
	Filter string
	// Since skips events stored before it (zero: every event kept).
	Since time.Time
	// Watch keeps delivering new events after the stored ones, until ctx
	// ends.
	Watch bool
	// CaughtUp, if set, is called once when the stored events have been
	// delivered (a watch then waits for new ones).
	CaughtUp func()
	// APIPrefix is where the connection's account sees the stream's
	// JetStream API (identity.SpecsAPIPrefix for a namespace publisher;
	// empty: the connection's own JetStream, in its domain).
	APIPrefix string
}

// ErrNoStream says the events stream does not exist: no controller of
// this version has run against the broker (serve creates it).
var ErrNoStream = errors.New("no events stream " + event.Stream + " (tinyctl serve creates it when it starts)")

// Read calls fn with each stored event that opts select, oldest first,
// and with Watch each new one as it arrives. It returns nil when the
// stored events are delivered (without Watch) or ctx ends (with it), fn's
// error, or the failure that stopped the read. Messages that do not
// decode as events are skipped.
func Read(ctx context.Context, c *bus.Conn, opts ReadOptions, fn func(event.Event) error) error {
	js, prefix := c.JetStream(), "$JS.API"
	if opts.APIPrefix != "" {
		var err error
		if js, err = jetstream.NewWithAPIPrefix(c.NATS(), opts.APIPrefix); err != nil {
			return fmt.Errorf("events: %w", err)
		}
		prefix = opts.APIPrefix
	}
	return c.Guarded(ctx, []string{prefix + ".CONSUMER.>"}, func(ctx context.Context) error {
		cons, err := js.OrderedConsumer(ctx, event.Stream, consumerConfig(opts))
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return ErrNoStream
		}
		if err != nil {
			return bus.Classify("read "+event.Stream, err)
		}
		r := &reading{opts: opts, fn: fn}
		if info := cons.CachedInfo(); info != nil {
			r.pending = info.NumPending
		}
		return r.run(ctx, cons)
	})
}

// consumerConfig is the ordered consumer that reads what opts select.
func consumerConfig(opts ReadOptions) jetstream.OrderedConsumerConfig {
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
	if opts.Filter != "" {
		cfg.FilterSubjects = []string{opts.Filter}
	}
	if !opts.Since.IsZero() {
		since := opts.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	return cfg
}

// reading is one Read's progress: how many stored events are still to
// come.
type reading struct {
	opts    ReadOptions
	fn      func(event.Event) error
	pending uint64
}

// caughtUp tells opts.CaughtUp, once, that the stored events are read.
func (r *reading) caughtUp() {
	if r.opts.CaughtUp != nil {
		r.opts.CaughtUp()
		r.opts.CaughtUp = nil
	}
}

func (r *reading) run(ctx context.Context, cons jetstream.Consumer) error {
	if r.pending == 0 {
		r.caughtUp()
		if !r.opts.Watch {
			return nil
		}
	}
	iter, err := cons.Messages()
	if err != nil {
		return bus.Classify("read "+event.Stream, err)
	}
	defer iter.Stop()
	for r.pending > 0 || r.opts.Watch {
		m, err := iter.Next(jetstream.NextContext(ctx))
		if ctx.Err() != nil && r.opts.Watch {
			return nil // a watch ends with its context
		}
		if err != nil {
			return bus.Classify("read "+event.Stream, err)
		}
		if md, err := m.Metadata(); err == nil {
			r.pending = md.NumPending
		}
		var e event.Event
		if json.Unmarshal(m.Data(), &e) == nil {
			if err := r.fn(e); err != nil {
				return err
			}
		}
		if r.pending == 0 {
			r.caughtUp()
		}
	}
	return nil
}
