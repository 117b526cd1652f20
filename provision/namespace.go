package provision

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api/action"
)

// EnsureNamespace creates the runtime namespace when it is absent and
// labels it as tinyctl's (LabelNamespaceRole) with the restricted Pod
// Security labels, except those the namespace already sets to another
// value: a user's choice is kept. A namespace it creates is annotated
// AnnotationCreatedBy. It writes nothing when the namespace already
// carries all of that. It fails when the API server refuses the read or
// the apply, and with ErrNamespaceTerminating while the namespace is being
// deleted.
func (p *Provisioner) EnsureNamespace(ctx context.Context) (Result, error) {
	name := p.opts.Namespace
	live, err := p.getNamespace(ctx, name)
	if err != nil {
		return Result{Kind: "Namespace", Name: name}, err
	}
	if live != nil && live.DeletionTimestamp != nil {
		return Result{Kind: "Namespace", Name: name}, fmt.Errorf("%s: %w since %s; install again once it is gone",
			namespaceKind.Kind+"/"+name, ErrNamespaceTerminating, live.DeletionTimestamp.UTC().Format(time.RFC3339))
	}
	obj := runtimeNamespace(name, live)
	if live != nil && hasAll(live.Labels, obj.GetLabels()) && hasAll(live.Annotations, obj.GetAnnotations()) {
		return Result{Kind: "Namespace", Name: name, Action: action.Unchanged}, nil
	}
	res, err := p.applier.Apply(ctx, obj)
	if err != nil {
		return Result{Kind: "Namespace", Name: name}, err
	}
	return fromApply(res), nil
}

// getNamespace returns the namespace, or nil when it does not exist.
func (p *Provisioner) getNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := p.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", namespaceKind.Kind+"/"+name, err)
	}
	return ns, nil
}

// runtimeNamespace is the namespace as tinyctl applies it, given the live
// one (nil when absent).
func runtimeNamespace(name string, live *corev1.Namespace) *unstructured.Unstructured {
	var liveLabels, liveAnnotations map[string]string
	if live != nil {
		liveLabels, liveAnnotations = live.Labels, live.Annotations
	}
	labels := map[string]any{LabelNamespaceRole: NamespaceRoleRuntime}
	for k, v := range restrictedPodSecurity {
		if cur := liveLabels[k]; cur == "" || cur == v {
			labels[k] = v
		}
	}
	md := map[string]any{"name": name, "labels": labels}
	if live == nil || liveAnnotations[AnnotationCreatedBy] != "" {
		md["annotations"] = map[string]any{AnnotationCreatedBy: CreatedByInstall}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": md,
	}}
}

// hasAll reports whether have holds every key of want with its value.
func hasAll(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// bareNamespace applies nothing but the name, which makes server-side
// apply drop every label and annotation tinyctl alone set.
func bareNamespace(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
}

// ErrNamespaceMissing means a namespace the controller is to manage does
// not exist: its Role cannot be created there.
var ErrNamespaceMissing = errors.New("namespace to manage does not exist")

// checkManagedNamespaces fails, before anything is written, when the
// controller values list namespaces (the chart grants a Role in each) of
// which some do not exist. The chart's own default, "default", always
// exists.
func (p *Provisioner) checkManagedNamespaces(ctx context.Context, values map[string]any) error {
	v, ok := nested(values, "namespaces")
	list, isList := v.([]any)
	if !ok || !isList {
		return nil
	}
	var missing []string
	for _, item := range list {
		name, _ := item.(string)
		_, err := p.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return fmt.Errorf("namespace %s: %w", name, err)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s; create it first (kubectl create namespace %s) or leave it out of --namespaces",
			ErrNamespaceMissing, strings.Join(missing, ", "), missing[0])
	}
	return nil
}
