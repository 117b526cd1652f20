package provision

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/deploy"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdEstablishTimeout bounds the wait for a new CRD to be served.
const crdEstablishTimeout = 30 * time.Second

// InstallCRDs server-side applies every CustomResourceDefinition embedded
// in deploy.CRDs and waits until each new or changed one is Established.
// Unlike Helm's crds/ folder, this also upgrades them. A CRD that exists
// without tinyctl's part-of label belongs to another installer (KEDA's own
// chart, say) and is skipped. It fails on the first CRD the API server
// refuses.
func (p *Provisioner) InstallCRDs(ctx context.Context) ([]Result, error) {
	objs, err := embeddedCRDs()
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, obj := range objs {
		res, err := p.installCRD(ctx, obj)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func (p *Provisioner) installCRD(ctx context.Context, obj *unstructured.Unstructured) (Result, error) {
	name := obj.GetName()
	res := Result{Kind: "CustomResourceDefinition", Name: name}
	live, err := p.getCRD(ctx, name)
	if err != nil {
		return res, err
	}
	if live != nil && live.GetLabels()[LabelPartOf] != PartOfTinyctl {
		res.Action = Skipped
		res.Detail = "installed by " + installer(live) + "; left alone"
		return res, nil
	}
	if err := stampHash(obj); err != nil {
		return res, fmt.Errorf("%s: %w", res.Ref(), err)
	}
	ar, err := p.applier.Apply(ctx, obj)
	if err != nil {
		return res, err
	}
	res = fromApply(ar)
	if res.Wrote() {
		return res, p.waitEstablished(ctx, name)
	}
	return res, nil
}

// getCRD returns the live CRD, or nil when it does not exist.
func (p *Provisioner) getCRD(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	live, err := p.dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", crdKind.Kind+"/"+name, err)
	}
	return live, nil
}

// installer names who installed a CRD, from its recommended labels.
func installer(crd *unstructured.Unstructured) string {
	l := crd.GetLabels()
	for _, k := range []string{LabelPartOf, "app.kubernetes.io/managed-by", "app.kubernetes.io/name"} {
		if v := l[k]; v != "" {
			return v
		}
	}
	return "another installer"
}

// waitEstablished polls until the CRD reports Established.
func (p *Provisioner) waitEstablished(ctx context.Context, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, crdEstablishTimeout, true,
		func(ctx context.Context) (bool, error) {
			live, err := p.getCRD(ctx, name)
			if err != nil || live == nil {
				return false, err
			}
			return crdEstablished(live), nil
		})
	if err != nil {
		return fmt.Errorf("%s: not established: %w", crdKind.Kind+"/"+name, err)
	}
	return nil
}

func crdEstablished(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// embeddedCRDs decodes every file of deploy.CRDs.
func embeddedCRDs() ([]*unstructured.Unstructured, error) {
	files, err := fs.Glob(deploy.CRDs, "crds/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("embedded CRDs: %w", err)
	}
	out := make([]*unstructured.Unstructured, 0, len(files))
	for _, f := range files {
		b, err := deploy.CRDs.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("embedded CRD %s: %w", f, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &obj.Object); err != nil {
			return nil, fmt.Errorf("embedded CRD %s: %w", f, err)
		}
		out = append(out, obj)
	}
	return out, nil
}
