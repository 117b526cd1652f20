package provision

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/render"
)

// Labels and annotations provision writes.
const (
	// LabelNamespaceRole marks the runtime namespace as dedicated to
	// tinyctl; its value is NamespaceRoleRuntime.
	LabelNamespaceRole   = "tinyctl.io/namespace"
	NamespaceRoleRuntime = "runtime"
	// LabelRuntime is on every release record and on the broker token
	// Secret; its value is the runtime namespace they belong to, which is
	// how Uninstall finds them.
	LabelRuntime = "tinyctl.io/runtime"
	// AnnotationCreatedBy is on a namespace that Install created (value
	// CreatedByInstall), so Uninstall may delete it.
	AnnotationCreatedBy = "tinyctl.io/created-by"
	CreatedByInstall    = "install"
	// LabelPartOf is the recommended label naming the application an
	// object belongs to; tinyctl's CRDs and Secret carry PartOfTinyctl.
	LabelPartOf   = "app.kubernetes.io/part-of"
	PartOfTinyctl = "tinyctl"
)

// restrictedPodSecurity are the Pod Security labels of the runtime
// namespace: every runtime pod meets the restricted standard.
var restrictedPodSecurity = map[string]string{
	"pod-security.kubernetes.io/enforce": "restricted",
	"pod-security.kubernetes.io/warn":    "restricted",
	"pod-security.kubernetes.io/audit":   "restricted",
}

// stampHash sets the content-hash annotation that lets apply skip an
// unchanged object. The hash covers the object as given.
func stampHash(obj *unstructured.Unstructured) error {
	h, err := render.ContentHash(obj.Object)
	if err != nil {
		return err
	}
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[render.AnnotationContentHash] = h
	obj.SetAnnotations(ann)
	return nil
}

// fromApply converts an apply result.
func fromApply(r apply.Result) Result {
	return Result{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Action: r.Action}
}
