package reconcile

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/bus/streams"
)

// Specs is what the loop reads from the spec store.
type Specs interface {
	// Watch streams the bucket's changes (see kv.Watcher).
	Watch(ctx context.Context, opts kv.WatchOptions) (*kv.Watcher, error)
	// Get returns the latest put of key, or bus.ErrNotFound when the key
	// was deleted or never written.
	Get(ctx context.Context, key string) (kv.Entry, error)
	// History returns the kept revisions of key, oldest first.
	History(ctx context.Context, key string) ([]kv.Entry, error)
	// Info identifies the bucket's incarnation (a recreated bucket has a
	// new creation time).
	Info(ctx context.Context) (kv.Info, error)
}

// Streams provisions a component's JetStream stream and durable consumer
// (streams.Manager).
type Streams interface {
	EnsureStreamAndConsumer(ctx context.Context, sc jetstream.StreamConfig, cc jetstream.ConsumerConfig, opts streams.EnsureOptions) (streams.EnsureResult, error)
	// Delete removes a stream with its messages and consumers.
	Delete(ctx context.Context, stream string) (api.Action, error)
}

// StreamLister lists stream names, for the periodic check that re-creates
// streams deleted out of band (bus.StreamNames).
type StreamLister func(ctx context.Context) ([]string, error)

// Statuses stores one status record per component per cluster.
type Statuses interface {
	Put(ctx context.Context, s api.Status) (uint64, error)
	Delete(ctx context.Context, component, cluster string) error
	List(ctx context.Context) ([]status.Record, error)
}

// Applier writes Kubernetes objects (package apply).
type Applier interface {
	Apply(ctx context.Context, obj *unstructured.Unstructured, opts ...apply.Option) (apply.Result, error)
	Delete(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (apply.Result, error)
}
