package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/internal/localkube"
	"github.com/tinyctl/tinyctl/render"
)

// benchNamespace holds every component of a run.
const benchNamespace = "bench"

// env is one measurement's world: a fresh kube-apiserver and etcd (with an
// audit log of every write), a fresh embedded nats-server, and the
// driver's own clients. Every measurement gets a new one, so none sees
// objects another left.
type env struct {
	cp       *localkube.ControlPlane
	nats     *bus.Embedded
	natsDir  string
	conn     *bus.Conn
	js       jetstream.JetStream
	specs    *specs.Store
	statuses *status.Store
	kube     *apply.Manager
	// controllerKubeconfig is the ServiceAccount kubeconfig the
	// controllers run with.
	controllerKubeconfig string
}

// newEnv starts the control plane and the broker, opens the buckets serve
// uses and creates the components' namespace. Close it.
func newEnv(ctx context.Context, log io.Writer, profiling bool) (_ *env, err error) {
	e := &env{}
	defer func() {
		if err != nil {
			e.close(context.Background())
		}
	}()
	if e.cp, err = localkube.Start(ctx, localkube.Options{Log: log, AuditLog: true, Profiling: profiling}); err != nil {
		return nil, err
	}
	if e.natsDir, err = os.MkdirTemp("", "tinyctl-bench-nats-"); err != nil {
		return nil, err
	}
	e.nats, err = bus.StartEmbedded(ctx, bus.EmbeddedConfig{ServerName: "bench", Port: -1,
		StoreDir: filepath.Join(e.natsDir, "js")}) // nats-server's default limits
	if err != nil {
		return nil, err
	}
	if e.conn, err = bus.Connect(ctx, bus.Config{URLs: []string{e.nats.ClientURL()}, Name: "tinyctl-bench"}, nil); err != nil {
		return nil, err
	}
	e.js = e.conn.JetStream()
	if e.specs, err = specs.Open(ctx, e.conn, specs.Config{}, kv.Ensure); err != nil {
		return nil, err
	}
	if e.statuses, err = status.Open(ctx, e.conn, status.Config{}, kv.Ensure); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(e.cp.Config)
	cfg.QPS, cfg.Burst, cfg.UserAgent = -1, 0, "tinyctl-bench"
	if e.kube, err = apply.New(cfg, render.AnnotationContentHash); err != nil {
		return nil, err
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": benchNamespace}}}
	if _, err := e.kube.Apply(ctx, ns); err != nil {
		return nil, fmt.Errorf("namespace: %w", err)
	}
	if e.controllerKubeconfig, err = e.serviceAccountKubeconfig(ctx, e.natsDir); err != nil {
		return nil, err
	}
	return e, nil
}

// close stops everything newEnv started and removes its state.
func (e *env) close(ctx context.Context) {
	if e.conn != nil {
		e.conn.Close()
	}
	var errs []error
	if e.nats != nil {
		errs = append(errs, e.nats.Shutdown(ctx))
	}
	if e.natsDir != "" {
		errs = append(errs, os.RemoveAll(e.natsDir))
	}
	if e.cp != nil {
		e.cp.Stop()
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "bench: cleanup:", err)
	}
}
