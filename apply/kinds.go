package apply

import "k8s.io/apimachinery/pkg/runtime/schema"

// Kinds the project reads and writes by name.
var (
	CRD        = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	Namespace  = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	Deployment = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
)
