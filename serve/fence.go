package serve

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/reconcile"
)

// ErrNotLeader is returned instead of writing when this process's lease is
// no longer valid.
var ErrNotLeader = errors.New("not the leader: lease expired or lost, write refused")

// fence guards every write by the lease: it refuses the write when the
// lease is no longer valid by this process's clock (which, unlike a
// goroutine, keeps running while the process is stopped), and bounds the
// write's context by the lease's fencing deadline, so a write that was
// about to be sent when the process was paused is cancelled when it
// resumes instead of landing after a new leader took over.
type fence struct{ validUntil func() time.Time }

func (f fence) check(ctx context.Context) (context.Context, context.CancelFunc, error) {
	until := f.validUntil()
	if !time.Now().Before(until) {
		return ctx, func() {}, ErrNotLeader
	}
	ctx, cancel := context.WithDeadline(ctx, until)
	return ctx, cancel, nil
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

func (s fencedStreams) EnsureStreamAndConsumer(ctx context.Context, sc jetstream.StreamConfig, cc jetstream.ConsumerConfig, o bus.EnsureOptions) (bus.EnsureResult, error) {
	ctx, cancel, err := s.check(ctx)
	defer cancel()
	if err != nil {
		return bus.EnsureResult{}, err
	}
	return s.next.EnsureStreamAndConsumer(ctx, sc, cc, o)
}

func (s fencedStreams) Delete(ctx context.Context, stream string, p bus.DeletionPolicy) (bus.Action, error) {
	ctx, cancel, err := s.check(ctx)
	defer cancel()
	if err != nil {
		return "", err
	}
	return s.next.Delete(ctx, stream, p)
}

type fencedStatuses struct {
	fence
	next reconcile.Statuses
}

func (s fencedStatuses) Put(ctx context.Context, st bus.Status) (uint64, error) {
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

func (s fencedStatuses) List(ctx context.Context) ([]bus.StatusRecord, error) {
	return s.next.List(ctx)
}
