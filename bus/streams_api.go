package bus

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// jsAPI is the JetStream calls StreamManager makes. connAPI implements it
// on a Conn; tests substitute a fake.
type jsAPI interface {
	StreamInfo(ctx context.Context, name string) (*jetstream.StreamInfo, error)
	CreateStream(ctx context.Context, cfg jetstream.StreamConfig) error
	UpdateStream(ctx context.Context, cfg jetstream.StreamConfig) error
	DeleteStream(ctx context.Context, name string) error
	ConsumerInfo(ctx context.Context, stream, name string) (*jetstream.ConsumerInfo, error)
	CreateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error
	UpdateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error
	DeleteConsumer(ctx context.Context, stream, name string) error
}

// connAPI makes jsAPI calls on a Conn, turning permission violations on a
// stream's API subjects into ErrPermissionDenied.
type connAPI struct{ c *Conn }

// The methods below are jsAPI's, each guarded against permission
// violations on the stream's API subjects.

func streamPatterns(stream string) []string {
	return []string{"$JS.API.*.*." + stream, "$JS.API.*.*." + stream + ".>"}
}

func (a connAPI) StreamInfo(ctx context.Context, name string) (info *jetstream.StreamInfo, err error) {
	err = a.c.guarded(ctx, streamPatterns(name), func(ctx context.Context) error {
		s, err := a.c.js.Stream(ctx, name)
		if err == nil {
			info = s.CachedInfo()
		}
		return err
	})
	return info, err
}

func (a connAPI) CreateStream(ctx context.Context, cfg jetstream.StreamConfig) error {
	return a.c.guarded(ctx, streamPatterns(cfg.Name), func(ctx context.Context) error {
		_, err := a.c.js.CreateStream(ctx, cfg)
		return err
	})
}

func (a connAPI) UpdateStream(ctx context.Context, cfg jetstream.StreamConfig) error {
	return a.c.guarded(ctx, streamPatterns(cfg.Name), func(ctx context.Context) error {
		_, err := a.c.js.UpdateStream(ctx, cfg)
		return err
	})
}

func (a connAPI) DeleteStream(ctx context.Context, name string) error {
	return a.c.guarded(ctx, streamPatterns(name), func(ctx context.Context) error {
		return a.c.js.DeleteStream(ctx, name)
	})
}

func (a connAPI) ConsumerInfo(ctx context.Context, stream, name string) (info *jetstream.ConsumerInfo, err error) {
	err = a.c.guarded(ctx, streamPatterns(stream), func(ctx context.Context) error {
		c, err := a.c.js.Consumer(ctx, stream, name)
		if err == nil {
			info = c.CachedInfo()
		}
		return err
	})
	return info, err
}

func (a connAPI) CreateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error {
	return a.c.guarded(ctx, streamPatterns(stream), func(ctx context.Context) error {
		_, err := a.c.js.CreateConsumer(ctx, stream, cfg)
		return err
	})
}

func (a connAPI) UpdateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error {
	return a.c.guarded(ctx, streamPatterns(stream), func(ctx context.Context) error {
		_, err := a.c.js.UpdateConsumer(ctx, stream, cfg)
		return err
	})
}

func (a connAPI) DeleteConsumer(ctx context.Context, stream, name string) error {
	return a.c.guarded(ctx, streamPatterns(stream), func(ctx context.Context) error {
		return a.c.js.DeleteConsumer(ctx, stream, name)
	})
}
