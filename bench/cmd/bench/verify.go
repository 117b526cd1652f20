package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/render"
)

// verify checks, after a run's clock has stopped, that the run really
// made n Deployments, NetworkPolicies and component streams: a fast run
// that wrote nothing must not pass for a result.
func (e *env) verify(ctx context.Context, n int) error {
	cfg := rest.CopyConfig(e.cp.Config)
	cfg.QPS = -1
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "apps", Version: "v1", Resource: "deployments"},
		{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
	} {
		list, err := client.Resource(gvr).Namespace(benchNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(list.Items) != n {
			return fmt.Errorf("verify: %d %s, want %d", len(list.Items), gvr.Resource, n)
		}
	}
	return e.verifyStreams(ctx, n)
}

// verifyStreams checks that the broker holds exactly the work-queue
// streams of components 0..n-1 beside the buckets and serve's events
// stream: it names what is missing and what no component of the run owns.
func (e *env) verifyStreams(ctx context.Context, n int) error {
	want := make(map[string]bool, n)
	for i := range n {
		c := component(i)
		want[render.StreamName(c.Metadata.Namespace, c.Metadata.Name)] = true
	}
	seen := make(map[string]bool, n)
	var extra []string
	names := e.js.StreamNames(ctx)
	for name := range names.Name() {
		switch {
		case want[name]:
			seen[name] = true
		case !strings.HasPrefix(name, "KV_") && name != event.Stream:
			extra = append(extra, name)
		}
	}
	if err := names.Err(); err != nil {
		return err
	}
	var missing []string
	for name := range want {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return nil
	}
	slices.Sort(missing)
	slices.Sort(extra)
	return fmt.Errorf("verify: %d of %d component streams, %d missing %v, %d not the run's %v",
		len(seen), n, len(missing), firstFew(missing), len(extra), firstFew(extra))
}

// firstFew is at most the first three of names, for an error message.
func firstFew(names []string) []string {
	return names[:min(len(names), 3)]
}
