package provision

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/deploy"
)

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
		res.Action = action.Skipped
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
		return res, p.applier.WaitEstablished(ctx, name, crdEstablishTimeout)
	}
	return res, nil
}

// getCRD returns the live CRD, or nil when it does not exist.
func (p *Provisioner) getCRD(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	return p.applier.Get(ctx, apply.CRD, "", name)
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
