package provision_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/serve/wire"

	"github.com/rs/zerolog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/bus/status"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision"
	"github.com/tinyctl/tinyctl/provision/keyring"
	"github.com/tinyctl/tinyctl/reconcile"
	"github.com/tinyctl/tinyctl/render"
)

// TestControllerRBACIsEnoughAndNoMore installs the controller chart, then
// runs a controller as the chart's ServiceAccount (impersonated): it
// reconciles a component into its Deployment and NetworkPolicy, and the
// API server refuses it Secrets, Pods, Leases and every kind it does not
// manage.
func TestControllerRBACIsEnoughAndNoMore(t *testing.T) {
	tests := []struct {
		name       string
		namespaced bool
		minting    bool
	}{
		{"cluster-wide ClusterRole", false, false},
		{"Roles in the listed namespaces", true, false},
		{"Roles with an account signing key", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := kube.RestrictedNamespace(t)
			r := newRuntime(t, provision.Options{})
			values := map[string]any{"namespaces": []any{}}
			var scope []string
			if tt.namespaced {
				values = map[string]any{"namespaces": []any{target}}
				scope = []string{target}
			}
			var minter reconcile.Minter
			if tt.minting {
				keys, err := identity.NewKeys()
				testenv.Must(t, err)
				minter = keys.Signer()
				values["nats"] = map[string]any{"identity": map[string]any{"signerSecret": "signer", "account": keys.AccountPublicKey()}}
			}
			ctx := context.Background()
			if _, err := r.p.EnsureNamespace(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := r.p.InstallController(ctx, "", provision.AuthToken, values); err != nil {
				t.Fatal(err)
			}
			sa := rest.CopyConfig(kube.Config)
			sa.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + r.ns + ":tinyctl"}

			specs := runController(t, sa, scope, minter)
			publish(t, specs, target, "rbac-demo")
			kinds := []string{"Deployment", "NetworkPolicy"}
			if tt.minting {
				kinds = append(kinds, "Secret")
			}
			for _, kind := range kinds {
				waitExists(t, kind, target, "rbac-demo")
			}

			refused := forbiddenCalls(sa, target, r.ns)
			cs := kubernetes.NewForConfigOrDie(sa)
			if tt.namespaced {
				refused["list Deployments outside the listed namespaces"] = func(ctx context.Context, cs kubernetes.Interface) error {
					_, err := cs.AppsV1().Deployments(r.ns).List(ctx, metav1.ListOptions{})
					return err
				}
				refused["read an APIService other than KEDA's"] = func(ctx context.Context, cs kubernetes.Interface) error {
					_, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1.apps").DoRaw(ctx)
					return err
				}
				// What tells a namespaced controller whether KEDA runs: no
				// KEDA here, so not found, not forbidden.
				_, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.external.metrics.k8s.io").DoRaw(ctx)
				if !apierrors.IsNotFound(err) {
					t.Errorf("reading KEDA's external metrics APIService: %v, want NotFound", err)
				}
			}
			for what, call := range refused {
				if err := call(ctx, cs); !apierrors.IsForbidden(err) {
					t.Errorf("%s: %v, want Forbidden", what, err)
				}
			}
		})
	}
}

// forbiddenCalls are what the controller must not be able to do.
func forbiddenCalls(sa *rest.Config, target, runtimeNS string) map[string]func(context.Context, kubernetes.Interface) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nope"}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "nope"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	return map[string]func(context.Context, kubernetes.Interface) error{
		"read the broker token Secret": func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Secrets(runtimeNS).Get(ctx, keyring.TokenSecret, metav1.GetOptions{})
			return err
		},
		"list Secrets": func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Secrets(target).List(ctx, metav1.ListOptions{})
			return err
		},
		"create a ConfigMap": func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().ConfigMaps(target).Create(ctx, cm, metav1.CreateOptions{})
			return err
		},
		"create a Service": func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Services(target).Create(ctx, svc, metav1.CreateOptions{})
			return err
		},
		// Pods are read (Ready is judged on them), never written.
		"delete Pods": func(ctx context.Context, cs kubernetes.Interface) error {
			return cs.CoreV1().Pods(target).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		"read a pod's log": func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Pods(target).GetLogs("nope", &corev1.PodLogOptions{}).DoRaw(ctx)
			return err
		},
		"list Leases": func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoordinationV1().Leases(runtimeNS).List(ctx, metav1.ListOptions{})
			return err
		},
		"create a Namespace": func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nope"}}, metav1.CreateOptions{})
			return err
		},
	}
}

// runController runs a reconcile.Controller whose every Kubernetes call
// goes through cfg, on its own embedded NATS server, until the test ends.
// It returns the spec store to publish into.
func runController(t *testing.T, cfg *rest.Config, namespaces []string, minter reconcile.Minter) *specs.Store {
	t.Helper()
	ctx := context.Background()
	conn, err := bus.Connect(ctx, bus.Config{URLs: []string{natstest.Start(t).URL()}, Name: t.Name()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	specStore, err := specs.Open(ctx, conn, specs.Config{}, kv.Ensure)
	if err != nil {
		t.Fatal(err)
	}
	statuses, err := status.Open(ctx, conn, status.Config{}, kv.Ensure)
	if err != nil {
		t.Fatal(err)
	}
	js := streams.New(conn, 0)
	a, err := apply.New(cfg, render.AnnotationContentHash)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := wire.Deps(specStore, statuses, js, a, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	deps.Minter = minter
	cl := render.Cluster{Name: "rbac"}
	if minter != nil {
		cl.NATS.CredentialsSecret = render.PerComponent
	}
	ctrl := reconcile.New(reconcile.Config{Cluster: cl, Namespaces: namespaces, Recheck: 200 * time.Millisecond}, deps)
	runCtx, stop := context.WithCancel(zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel).WithContext(ctx))
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		if !ctrl.Ready() {
			return errors.New("controller not ready")
		}
		return nil
	})
	return specStore
}

// publish puts a minimal component into the spec store.
func publish(t *testing.T, specs *specs.Store, ns, name string) {
	t.Helper()
	c := api.Component{
		APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: name, Namespace: ns},
		Spec: api.Spec{
			Image: "registry.example.com/acme/" + name + ":1.0.0",
			Jobs:  api.Jobs{Subjects: []string{ns + "." + name + ".>"}},
		},
	}
	b, err := api.Canonical(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := specs.Put(context.Background(), api.KeyOf(defaults.Apply(c)), b); err != nil {
		t.Fatal(err)
	}
}

var childResources = map[string]schema.GroupVersionResource{
	"Secret":        {Version: "v1", Resource: "secrets"},
	"Deployment":    {Group: "apps", Version: "v1", Resource: "deployments"},
	"NetworkPolicy": {Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
}

// waitExists polls (as admin) until the object exists.
func waitExists(t *testing.T, kind, ns, name string) {
	t.Helper()
	dc, _ := kube.Dynamic(t)
	if kind == "Secret" {
		name = render.CredentialsSecretName(name)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		_, err := dc.Resource(childResources[kind]).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", kind, ns, name, err)
		}
		return nil
	})
}
