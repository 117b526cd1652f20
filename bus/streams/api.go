package streams

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
)

// jsAPI is the JetStream calls Manager makes. connAPI implements it
// on a Conn; tests substitute a fake.
type jsAPI interface {
	StreamInfo(ctx context.Context, name string) (*jetstream.StreamInfo, error)
	CreateStream(ctx context.Context, cfg jetstream.StreamConfig) (*jetstream.StreamInfo, error)
	UpdateStream(ctx context.Context, cfg jetstream.StreamConfig) (*jetstream.StreamInfo, error)
	DeleteStream(ctx context.Context, name string) error
	ConsumerInfo(ctx context.Context, stream, name string) (*jetstream.ConsumerInfo, error)
	CreateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error
	UpdateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error
	DeleteConsumer(ctx context.Context, stream, name string) error
	StreamNames(ctx context.Context) ([]string, error)
	ListStreams(ctx context.Context, fn func(*jetstream.StreamInfo)) error
}

// connAPI makes jsAPI calls on a Conn through the JetStream API at prefix
// (an account's own, or another account's imported under a prefix),
// turning permission violations on a stream's API subjects into
// ErrPermissionDenied.
type connAPI struct {
	c      *bus.Conn
	js     jetstream.JetStream
	prefix string
}

// The methods below are jsAPI's, each guarded against permission
// violations on the stream's API subjects.

func (a connAPI) streamPatterns(stream string) []string {
	return []string{a.prefix + ".*.*." + stream, a.prefix + ".*.*." + stream + ".>"}
}

func (a connAPI) StreamInfo(ctx context.Context, name string) (info *jetstream.StreamInfo, err error) {
	err = a.c.Guarded(ctx, a.streamPatterns(name), func(ctx context.Context) error {
		s, err := a.js.Stream(ctx, name)
		if err == nil {
			info = s.CachedInfo()
		}
		return err
	})
	return info, err
}

func (a connAPI) CreateStream(ctx context.Context, cfg jetstream.StreamConfig) (info *jetstream.StreamInfo, err error) {
	err = a.c.Guarded(ctx, a.streamPatterns(cfg.Name), func(ctx context.Context) error {
		s, err := a.js.CreateStream(ctx, cfg)
		if err == nil {
			info = s.CachedInfo()
		}
		return err
	})
	return info, err
}

func (a connAPI) UpdateStream(ctx context.Context, cfg jetstream.StreamConfig) (info *jetstream.StreamInfo, err error) {
	err = a.c.Guarded(ctx, a.streamPatterns(cfg.Name), func(ctx context.Context) error {
		s, err := a.js.UpdateStream(ctx, cfg)
		if err == nil {
			info = s.CachedInfo()
		}
		return err
	})
	return info, err
}

func (a connAPI) DeleteStream(ctx context.Context, name string) error {
	return a.c.Guarded(ctx, a.streamPatterns(name), func(ctx context.Context) error {
		return a.js.DeleteStream(ctx, name)
	})
}

func (a connAPI) ConsumerInfo(ctx context.Context, stream, name string) (info *jetstream.ConsumerInfo, err error) {
	err = a.c.Guarded(ctx, a.streamPatterns(stream), func(ctx context.Context) error {
		c, err := a.js.Consumer(ctx, stream, name)
		if err == nil {
			info = c.CachedInfo()
		}
		return err
	})
	return info, err
}

func (a connAPI) CreateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error {
	return a.c.Guarded(ctx, a.streamPatterns(stream), func(ctx context.Context) error {
		_, err := a.js.CreateConsumer(ctx, stream, cfg)
		return err
	})
}

func (a connAPI) UpdateConsumer(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) error {
	return a.c.Guarded(ctx, a.streamPatterns(stream), func(ctx context.Context) error {
		_, err := a.js.UpdateConsumer(ctx, stream, cfg)
		return err
	})
}

func (a connAPI) DeleteConsumer(ctx context.Context, stream, name string) error {
	return a.c.Guarded(ctx, a.streamPatterns(stream), func(ctx context.Context) error {
		return a.js.DeleteConsumer(ctx, stream, name)
	})
}

func (a connAPI) StreamNames(ctx context.Context) ([]string, error) {
	var names []string
	lister := a.js.StreamNames(ctx)
	for name := range lister.Name() {
		names = append(names, name)
	}
	return names, lister.Err()
}

func (a connAPI) ListStreams(ctx context.Context, fn func(*jetstream.StreamInfo)) error {
	lister := a.js.ListStreams(ctx)
	for info := range lister.Info() {
		fn(info)
	}
	return lister.Err()
}
