package testenv

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/internal/localkube"
)

// Kube is a real kube-apiserver with etcd, shared by the tests of one package.
type Kube struct {
	*localkube.ControlPlane
}

// StartKube starts a control plane (building its binaries on first use, with
// progress on stderr). Call it once per package, from TestMain.
func StartKube(opts localkube.Options) (*Kube, error) {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cp, err := localkube.Start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("testenv: start control plane: %w", err)
	}
	return &Kube{ControlPlane: cp}, nil
}

// RunWithKube is a TestMain body: it starts a control plane into *k, runs
// the tests, stops the control plane and exits with the tests' code. A
// control plane that cannot start fails the package rather than skipping it.
func RunWithKube(m *testing.M, k **Kube) {
	os.Exit(runWithKube(m, k))
}

// RunWithKubeAndTinyctl is RunWithKube for packages that run the tinyctl
// binary as a user would: it also builds it once into *bin (removed after
// the tests).
func RunWithKubeAndTinyctl(m *testing.M, k **Kube, bin *string) {
	os.Exit(runWithKubeAndTinyctl(m, k, bin))
}

func runWithKubeAndTinyctl(m *testing.M, k **Kube, bin *string) int {
	path, cleanup, err := BuildTinyctl()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	*bin = path
	return runWithKube(m, k)
}

func runWithKube(m *testing.M, k **Kube) int {
	kube, err := StartKube(localkube.Options{AuditLog: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer kube.Stop()
	*k = kube
	return m.Run()
}

// Clientset returns a typed client with admin rights.
func (k *Kube) Clientset(tb testing.TB) *kubernetes.Clientset {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(k.Config)
	if err != nil {
		tb.Fatalf("clientset: %v", err)
	}
	return cs
}

// Dynamic returns an admin dynamic client whose API warnings are collected
// in the returned Warnings, so tests can assert on PodSecurity warnings.
func (k *Kube) Dynamic(tb testing.TB) (dynamic.Interface, *Warnings) {
	tb.Helper()
	w := &Warnings{}
	cfg := rest.CopyConfig(k.Config)
	cfg.WarningHandler = w
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		tb.Fatalf("dynamic client: %v", err)
	}
	return dc, w
}

// RestrictedNamespace creates a fresh namespace labelled to warn on (not
// enforce) the restricted Pod Security Standard, and returns its name.
func (k *Kube) RestrictedNamespace(tb testing.TB) string {
	tb.Helper()
	return k.Namespace(tb, map[string]string{
		"pod-security.kubernetes.io/warn":         "restricted",
		"pod-security.kubernetes.io/warn-version": "latest",
	})
}

// Namespace creates a fresh namespace with the given labels, deleted when
// the test ends, and returns its name.
func (k *Kube) Namespace(tb testing.TB, labels map[string]string) string {
	tb.Helper()
	m := k.Manager(tb)
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetGenerateName("t-")
	ns.SetLabels(labels)
	got, _, err := m.Create(context.Background(), ns)
	if err != nil {
		tb.Fatalf("create namespace: %v", err)
	}
	tb.Cleanup(func() {
		if _, err := m.Delete(context.Background(), apply.Namespace, "", got.GetName()); err != nil {
			tb.Logf("delete namespace %s: %v", got.GetName(), err)
		}
	})
	return got.GetName()
}

// Warnings collects the warning headers the API server sends to a client.
// It implements rest.WarningHandler and is safe for concurrent use.
type Warnings struct {
	mu   sync.Mutex
	msgs []string
}

// HandleWarningHeader records one warning.
func (w *Warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// All returns every warning seen so far.
func (w *Warnings) All() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// PodSecurity returns the warnings that report a Pod Security violation.
func (w *Warnings) PodSecurity() []string {
	var out []string
	for _, m := range w.All() {
		if strings.Contains(m, "would violate PodSecurity") {
			out = append(out, m)
		}
	}
	return out
}

// Reset forgets the warnings seen so far.
func (w *Warnings) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = nil
}
