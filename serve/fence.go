package serve

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus/lease"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/reconcile"
)

// fence guards every write of the loop by the lease (lease.Fence).
type fence struct{ f lease.Fence }

func (f fence) check(ctx context.Context) (context.Context, context.CancelFunc, error) {
	return f.f.Check(ctx)
}

type fencedApplier struct {
	fence
	next reconcile.Applier
}

func (a fencedApplier) Apply(ctx context.Context, obj *unstructured.Unstructured, opts ...apply.Option) (apply.Result, error) {
	ctx, cancel, err := a.check(ctx)
	defer cancel()
	if err != nil {
		return apply.Result{}, err
	}
	return a.next.Apply(ctx, obj, opts...)
}

func (a fencedApplier) Delete(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (apply.Result, error) {
	ctx, cancel, err := a.check(ctx)
	defer cancel()
	if err != nil {
		return apply.Result{}, err
	}
	return a.next.Delete(ctx, gvk, ns, name)
}

type fencedStreams struct {
	fence
	next reconcile.Streams
}

func (s fencedStreams) EnsureStreamAndConsumer(ctx context.Context, sc jetstream.StreamConfig, cc jetstream.ConsumerConfig, o streams.EnsureOptions) (streams.EnsureResult, error) {
	ctx, cancel, err := s.check(ctx)
	defer cancel()
	if err != nil {
		return streams.EnsureResult{}, err
	}
	return s.next.EnsureStreamAndConsumer(ctx, sc, cc, o)
}

func (s fencedStreams) Delete(ctx context.Context, stream string) (api.Action, error) {
	ctx, cancel, err := s.check(ctx)
	defer cancel()
	if err != nil {
		return "", err
	}
	return s.next.Delete(ctx, stream)
}

type fencedStatuses struct {
	fence
	next reconcile.Statuses
}

func (s fencedStatuses) Put(ctx context.Context, st api.Status) (uint64, error) {
	ctx, cancel, err := s.check(ctx)
	defer cancel()
	if err != nil {
		return 0, err
	}
	return s.next.Put(ctx, st)
}

func (s fencedStatuses) Delete(ctx context.Context, component, cluster string) error {
	ctx, cancel, err := s.check(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	return s.next.Delete(ctx, component, cluster)
}

func (s fencedStatuses) List(ctx context.Context) ([]status.Record, error) {
	return s.next.List(ctx)
}
