package provision

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api/action"
	"github.com/tinyctl/tinyctl/apply"
)

var (
	secretKind    = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	pvcKind       = schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}
	namespaceKind = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
)

// keptData is the Detail of objects UninstallOptions.KeepData keeps.
const keptData = "broker data kept"

// removeSecrets deletes the Secrets tinyctl generated for this runtime:
// the broker's token, or its keys and the Secrets derived from them.
func (p *Provisioner) removeSecrets(ctx context.Context, keep bool) ([]Result, error) {
	ns := p.opts.Namespace
	sel := LabelRuntime + "=" + ns + "," + LabelPartOf + "=" + PartOfTinyctl
	list, err := p.kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list the runtime's secrets in %s: %w", ns, err)
	}
	var out []Result
	for _, s := range list.Items {
		res, err := p.removeOrKeep(ctx, secretKind, ns, s.Name, keep)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// removeVolumes deletes the broker's JetStream volume claims, which the
// StatefulSet created from its template and Helm does not remove.
func (p *Provisioner) removeVolumes(ctx context.Context, keep bool) ([]Result, error) {
	ns := p.opts.Namespace
	sel := "app.kubernetes.io/name=" + ChartBroker + ",app.kubernetes.io/instance=" + ChartBroker
	list, err := p.kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list broker volumes in %s: %w", ns, err)
	}
	var out []Result
	for _, c := range list.Items {
		res, err := p.removeOrKeep(ctx, pvcKind, ns, c.Name, keep)
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func (p *Provisioner) removeOrKeep(ctx context.Context, gvk schema.GroupVersionKind, ns, name string, keep bool) (Result, error) {
	if keep {
		return Result{Kind: gvk.Kind, Namespace: ns, Name: name, Action: action.Retained, Detail: keptData}, nil
	}
	ar, err := p.applier.Delete(ctx, gvk, ns, name)
	if err != nil {
		return Result{Kind: gvk.Kind, Namespace: ns, Name: name}, err
	}
	return fromApply(ar), nil
}

// removeCRDs deletes tinyctl's CRDs of which no object is left in the
// cluster: deleting a CRD deletes every object of its kind.
func (p *Provisioner) removeCRDs(ctx context.Context) ([]Result, error) {
	objs, err := embeddedCRDs()
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, obj := range objs {
		res, err := p.removeCRD(ctx, obj.GetName())
		out = append(out, res)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func (p *Provisioner) removeCRD(ctx context.Context, name string) (Result, error) {
	res := Result{Kind: apply.CRD.Kind, Name: name}
	live, err := p.getCRD(ctx, name)
	switch {
	case err != nil:
		return res, err
	case live == nil:
		res.Action = action.Absent
		return res, nil
	case live.GetLabels()[LabelPartOf] != PartOfTinyctl:
		res.Action, res.Detail = action.Skipped, "installed by "+installer(live)+"; left alone"
		return res, nil
	}
	kind, inUse, err := p.crdInUse(ctx, live)
	if err != nil {
		return res, err
	}
	if inUse {
		res.Action, res.Detail = action.Retained, kind+" objects still exist; deleting the CRD would delete them"
		return res, nil
	}
	ar, err := p.applier.Delete(ctx, apply.CRD, "", name)
	if err != nil {
		return res, err
	}
	return fromApply(ar), nil
}

// crdInUse reports whether any object of the CRD's kind exists.
func (p *Provisioner) crdInUse(ctx context.Context, crd *unstructured.Unstructured) (string, bool, error) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if served, _ := m["served"].(bool); !served {
			continue
		}
		version, _ := m["name"].(string)
		gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: plural}
		list, err := p.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return kind, false, fmt.Errorf("list %s: %w", kind, err)
		}
		return kind, len(list.Items) > 0, nil
	}
	return kind, false, nil
}

// removeNamespace deletes the runtime namespace when Install created it
// and nothing but tinyctl's objects were in it; otherwise it keeps it, and
// takes tinyctl's labels off a namespace Install did not create.
func (p *Provisioner) removeNamespace(ctx context.Context, keep bool) ([]Result, error) {
	name := p.opts.Namespace
	res := Result{Kind: namespaceKind.Kind, Name: name}
	live, err := p.getNamespace(ctx, name)
	switch {
	case err != nil:
		return nil, err
	case live == nil:
		res.Action = action.Absent
		return []Result{res}, nil
	case keep:
		res.Action, res.Detail = action.Retained, keptData
		return []Result{res}, nil
	case live.Annotations[AnnotationCreatedBy] != CreatedByInstall:
		return p.releaseNamespace(ctx, name)
	}
	left, err := p.leftovers(ctx, name)
	if err != nil {
		return nil, err
	}
	if len(left) > 0 {
		res.Action, res.Detail = action.Retained, "holds objects tinyctl did not create: "+left
		return []Result{res}, nil
	}
	r, err := p.removeOrKeep(ctx, namespaceKind, "", name, false)
	return []Result{r}, err
}

// releaseNamespace applies the bare namespace, which drops the labels and
// annotations only tinyctl set.
func (p *Provisioner) releaseNamespace(ctx context.Context, name string) ([]Result, error) {
	ar, err := p.applier.Apply(ctx, bareNamespace(name))
	if err != nil {
		return nil, err
	}
	r := fromApply(ar)
	r.Detail = "not created by tinyctl: kept, without tinyctl's labels"
	return []Result{r}, nil
}
