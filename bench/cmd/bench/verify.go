package main

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
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
	streams := 0
	names := e.js.StreamNames(ctx)
	for name := range names.Name() {
		if !strings.HasPrefix(name, "KV_") {
			streams++
		}
	}
	if err := names.Err(); err != nil {
		return err
	}
	if streams != n {
		return fmt.Errorf("verify: %d component streams, want %d", streams, n)
	}
	return nil
}
