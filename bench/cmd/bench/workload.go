package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
)

// component is the i-th benchmark component: a worker with the defaults
// of everything (no scaling, so a Deployment and a NetworkPolicy), its own
// subjects, and env as its environment.
func component(i int, env ...api.EnvVar) api.Component {
	name := fmt.Sprintf("c-%05d", i)
	return defaults.Apply(api.Component{
		APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: name, Namespace: benchNamespace},
		Spec: api.Spec{
			Image: "registry.example.com/acme/" + name + ":1.0.0",
			Jobs:  api.Jobs{Subjects: []string{benchNamespace + "." + name + ".>"}},
			Env:   env,
		},
	})
}

// put publishes c's canonical JSON, as `tinyctl apply` does, and returns
// the revision.
func (e *env) put(ctx context.Context, c api.Component) (uint64, error) {
	b, err := api.Canonical(c)
	if err != nil {
		return 0, err
	}
	rev, err := e.specs.Put(ctx, api.KeyOf(c), b)
	if err != nil {
		return 0, fmt.Errorf("publish %s: %w", api.KeyOf(c), err)
	}
	return rev, nil
}

// publishAll puts components 0..n-1 with a few publishers and returns
// each key's revision.
func (e *env) publishAll(ctx context.Context, n int) (map[string]uint64, error) {
	revs := make(map[string]uint64, n)
	var mu sync.Mutex
	err := parallel(n, 8, func(i int) error {
		c := component(i)
		rev, err := e.put(ctx, c)
		mu.Lock()
		revs[api.KeyOf(c)] = rev
		mu.Unlock()
		return err
	})
	return revs, err
}

// parallel runs fn(0..n-1) on workers goroutines, each taking the next
// index, and returns the first error (the others stop taking work).
func parallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					failed.Store(true)
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
