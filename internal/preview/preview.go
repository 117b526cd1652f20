package preview

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/render"
)

// Result is what a preview found for one object.
type Result struct {
	// Ref names the object, "Kind/namespace/name".
	Ref string
	// Diff is a unified diff from the live object to the dry-run result,
	// "" when they are equal or the object was not compared.
	Diff string
	// Note says why the object was not checked (its kind is not installed
	// in the cluster), or "" when it was.
	Note string
}

// Preview dry-runs and diffs objects against one cluster, through the one
// Kubernetes path (package apply).
type Preview struct {
	m *apply.Manager
}

// New returns a Preview of the cluster cfg reaches. It fails only if the
// clients cannot be built from cfg.
func New(cfg *rest.Config) (*Preview, error) {
	m, err := apply.New(cfg, render.AnnotationContentHash)
	if err != nil {
		return nil, err
	}
	return &Preview{m: m}, nil
}

// DryRun server-side applies obj without persisting it. An object whose
// kind the cluster does not serve gets a Note instead of an error; any
// other refusal is returned, naming the object.
func (p *Preview) DryRun(ctx context.Context, obj *unstructured.Unstructured) (Result, error) {
	res := Result{Ref: ref(obj)}
	_, err := p.m.DryRun(ctx, obj)
	if errors.Is(err, apply.ErrKindNotInstalled) {
		res.Note = "not checked: " + obj.GetKind() + " is not installed in the cluster"
		return res, nil
	}
	return res, err
}

// carriedAnnotations are taken from the live object because they say
// where and from which revision it was rendered, not what it contains.
var carriedAnnotations = []string{render.AnnotationRevision, render.AnnotationCluster}

// Diff dry-runs obj and compares the result with the live object (absent
// counts as empty); only content differences show. Like DryRun, a kind
// the cluster does not serve gives a Note.
func (p *Preview) Diff(ctx context.Context, obj *unstructured.Unstructured) (Result, error) {
	res := Result{Ref: ref(obj)}
	var err error
	res.Diff, err = p.m.Diff(ctx, obj, carriedAnnotations...)
	if errors.Is(err, apply.ErrKindNotInstalled) {
		res.Note = "not compared: " + obj.GetKind() + " is not installed in the cluster"
		return res, nil
	}
	return res, err
}

// Removed reports a live object named by gvk, namespace and name that the
// component (componentLabel, render.ComponentLabelValue) no longer wants,
// as a diff that removes all of it. An absent object, one not labelled as
// the component's, or a kind the cluster does not serve give no diff.
func (p *Preview) Removed(ctx context.Context, gvk schema.GroupVersionKind, namespace, name, componentLabel string) (Result, error) {
	res := Result{Ref: gvk.Kind + "/" + namespace + "/" + name}
	live, err := p.m.Get(ctx, gvk, namespace, name)
	switch {
	case errors.Is(err, apply.ErrKindNotInstalled):
		return res, nil
	case err != nil:
		return res, err
	case live == nil || live.GetLabels()[render.LabelComponent] != componentLabel:
		return res, nil
	}
	res.Diff, err = apply.DiffObjects(res.Ref, live, nil)
	return res, err
}

func ref(obj *unstructured.Unstructured) string {
	return obj.GetKind() + "/" + obj.GetNamespace() + "/" + obj.GetName()
}
