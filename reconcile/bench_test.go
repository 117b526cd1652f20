package reconcile_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api/defaults"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// benchWorkers is the parallelism of both the floor and the controller.
const benchWorkers = 4

// BenchmarkRawFloor makes, per component, exactly the writes the controller
// makes — stream, consumer, Deployment, NetworkPolicy (server-side apply),
// status record — directly, with benchWorkers goroutines and no loop: the
// floor a controller cannot beat.
//
//	go test ./reconcile -run '^$' -bench . -benchtime 200x
func BenchmarkRawFloor(b *testing.B) {
	e := benchEnv(b)
	a, err := apply.New(kube.Config, render.AnnotationContentHash)
	if err != nil {
		b.Fatal(err)
	}
	streams := streams.New(e.conn, 0)
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range benchWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				e.rawWrite(b, a, streams, i)
			}
		})
	}
	wg.Wait()
}

func (e *env) rawWrite(b *testing.B, a *apply.Manager, js *streams.Manager, i int) {
	ctx := context.Background()
	c := defaults.Apply(e.component(fmt.Sprintf("c-%05d", i)))
	objs, err := render.Render(c, uint64(i+1), e.cfg.Cluster)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := js.EnsureStreamAndConsumer(ctx, objs.Stream, objs.Consumer, streams.EnsureOptions{}); err != nil {
		b.Fatal(err)
	}
	kids, err := objs.Children()
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range kids {
		if _, err := a.Apply(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := e.statuses.Put(ctx, api.Status{Component: api.KeyOf(c), Cluster: e.cfg.Cluster.Name, ObservedRevision: uint64(i + 1)}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkControllerConverges publishes b.N components to the spec bucket
// and measures until the controller (benchWorkers workers) reports every
// one Ready: publish → watch → render → ensure → apply → status.
//
//	go test ./reconcile -run '^$' -bench . -benchtime 200x
func BenchmarkControllerConverges(b *testing.B) {
	e := benchEnv(b)
	e.cfg.Workers = benchWorkers
	done := &convergence{want: b.N, all: make(chan struct{}), ok: map[string]bool{}}
	e.obs = done
	e.start()
	b.ResetTimer()
	for i := range b.N {
		e.publish(e.component(fmt.Sprintf("c-%05d", i)))
	}
	select {
	case <-done.all:
	case <-time.After(10 * time.Minute):
		b.Fatalf("%d of %d components converged", done.count(), b.N)
	}
}

// convergence is an Observer that closes all once want distinct keys have
// been reconciled without error (status written last, so they are Ready).
type convergence struct {
	mu   sync.Mutex
	want int
	ok   map[string]bool
	all  chan struct{}
}

func (c *convergence) Reconciled(key string, _ time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || c.ok[key] {
		return
	}
	c.ok[key] = true
	if len(c.ok) == c.want {
		close(c.all)
	}
}

func (c *convergence) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ok)
}

func (c *convergence) Applied(apply.Result)                  {}
func (c *convergence) Retried(reconcile.Class)               {}
func (c *convergence) Rechecked(reconcile.Recheck)           {}
func (c *convergence) DeadLettered(string, int)              {}
func (c *convergence) Stepped(reconcile.Step, time.Duration) {}

// benchEnv is a fresh NATS server and namespace for one benchmark run.
func benchEnv(b *testing.B) *env { return newEnv(b, reconcile.Config{}) }
