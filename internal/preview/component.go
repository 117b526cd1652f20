package preview

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// scaledObjectGVK is KEDA's ScaledObject.
var scaledObjectGVK = schema.FromAPIVersionAndKind(render.ScaledObjectAPIVersion, render.ScaledObjectKind)

// Children renders the defaulted, valid component c at revision for
// cluster cl and returns its Kubernetes objects in apply order. It returns
// render's error when c cannot be rendered.
func Children(c api.Component, revision uint64, cl render.Cluster) ([]*unstructured.Unstructured, error) {
	objs, err := render.Render(c, revision, cl)
	if err != nil {
		return nil, err
	}
	return objs.Children()
}

// DryRunComponent renders c and dry-runs each of its objects, in apply
// order. On an error it returns the results so far and the error.
func (p *Preview) DryRunComponent(ctx context.Context, c api.Component, revision uint64, cl render.Cluster) ([]Result, error) {
	kids, err := Children(c, revision, cl)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(kids))
	for _, k := range kids {
		res, err := p.DryRun(ctx, k)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// DiffComponent renders c and diffs each of its objects with the live
// cluster. When c has no ScaledObject but the cluster still runs the one
// an earlier revision made, that one shows as removed. On an error it
// returns the results so far and the error.
func (p *Preview) DiffComponent(ctx context.Context, c api.Component, cl render.Cluster) ([]Result, error) {
	kids, err := Children(c, 0, cl)
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(kids)+1)
	scaled := false
	for _, k := range kids {
		scaled = scaled || k.GroupVersionKind() == scaledObjectGVK
		res, err := p.Diff(ctx, k)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	if scaled {
		return out, nil
	}
	md := c.Metadata
	res, err := p.Removed(ctx, scaledObjectGVK, md.Namespace, md.Name, render.ComponentLabelValue(md.Namespace, md.Name))
	if err != nil {
		return out, fmt.Errorf("%s: %w", res.Ref, err)
	}
	if res.Diff != "" {
		out = append(out, res)
	}
	return out, nil
}
