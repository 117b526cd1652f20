package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/render"
)

// floor makes, for components 0..n-1, exactly the writes serve makes for a
// new component and nothing else, from workers goroutines: render, create
// the stream and its durable consumer (no lookup first), server-side apply
// the NetworkPolicy and the Deployment (no read first: the apply package
// is told the object is absent), and put a Ready status record. No
// watch, queue, cache or check: the floor no controller can beat. steps
// times its writes as serve times its own.
func (e *env) floor(ctx context.Context, n, workers int, steps *stepClock) (time.Duration, error) {
	cluster := render.DefaultCluster()
	start := time.Now()
	err := parallel(n, workers, func(i int) error {
		return e.rawWrite(ctx, component(i), uint64(i+1), cluster, steps)
	})
	return time.Since(start), err
}

func (e *env) rawWrite(ctx context.Context, c api.Component, rev uint64, cluster render.Cluster, steps *stepClock) error {
	objs, err := render.Render(c, rev, cluster)
	if err != nil {
		return err
	}
	started := time.Now()
	if _, err := e.js.CreateStream(ctx, objs.Stream); err != nil {
		return fmt.Errorf("stream %s: %w", objs.Stream.Name, err)
	}
	if _, err := e.js.CreateConsumer(ctx, objs.Stream.Name, objs.Consumer); err != nil {
		return fmt.Errorf("consumer %s: %w", objs.Consumer.Durable, err)
	}
	steps.since("jetstream", started)
	kids, err := objs.Children()
	if err != nil {
		return err
	}
	started = time.Now()
	absent := apply.KnownLive(&metav1.PartialObjectMetadata{})
	for _, k := range kids {
		if _, err := e.kube.Apply(ctx, k, absent); err != nil {
			return err
		}
	}
	steps.since("kubernetes", started)
	started = time.Now()
	defer steps.since("status", started)
	return e.rawStatus(ctx, c, rev, cluster)
}

// rawUpdate makes the writes a changed env value costs serve: the
// Deployment's apply (the stream, consumer and NetworkPolicy are
// unchanged, and serve skips them) and the status record.
func (e *env) rawUpdate(ctx context.Context, c api.Component, rev uint64, cluster render.Cluster) error {
	objs, err := render.Render(c, rev, cluster)
	if err != nil {
		return err
	}
	kids, err := objs.Children()
	if err != nil {
		return err
	}
	for _, k := range kids {
		if k.GetKind() != "Deployment" {
			continue
		}
		if _, err := e.kube.Apply(ctx, k, apply.KnownLive(&metav1.PartialObjectMetadata{})); err != nil {
			return err
		}
	}
	return e.rawStatus(ctx, c, rev, cluster)
}

// rawStatus puts an Applied status record of c at rev.
func (e *env) rawStatus(ctx context.Context, c api.Component, rev uint64, cluster render.Cluster) error {
	now := time.Now()
	_, err := e.statuses.Put(ctx, api.Status{Component: api.KeyOf(c), Cluster: cluster.Name, ObservedRevision: rev,
		Conditions: []api.Condition{{Type: api.ConditionApplied, Status: api.ConditionTrue, LastTransitionTime: now}},
		UpdatedAt:  now})
	return err
}
