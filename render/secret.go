package render

import (
	"encoding/base64"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AnnotationCredentialsExpire says, on a component's credentials Secret,
// when the credentials it holds stop working.
const AnnotationCredentialsExpire = "tinyctl.io/credentials-expire"

// Credentials are what a component's credentials Secret holds: the NATS
// credentials file minted for its worker (for User, until Expires), and
// the TLS files of the cluster (each left out when empty).
type Credentials struct {
	File          []byte
	User          string
	Expires       time.Time
	CA, Cert, Key []byte
}

// CredentialsSecret is the Secret named name in namespace ns holding c
// for component's worker, labelled as the component's child. Its content
// hash is the minted user's key, so every mint is written.
func CredentialsSecret(ns, component, name string, c Credentials) *unstructured.Unstructured {
	data := map[string]any{DefaultCredentialsKey: base64.StdEncoding.EncodeToString(c.File)}
	for key, file := range map[string][]byte{TLSCAKey: c.CA, TLSCertKey: c.Cert, TLSKeyKey: c.Key} {
		if len(file) > 0 {
			data[key] = base64.StdEncoding.EncodeToString(file)
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{
			"name": name, "namespace": ns,
			"labels": map[string]any{
				LabelManagedBy: ManagedByValue,
				LabelComponent: ComponentLabelValue(ns, component),
				LabelName:      component,
			},
			"annotations": map[string]any{
				AnnotationContentHash:       c.User,
				AnnotationCredentialsExpire: c.Expires.UTC().Format(time.RFC3339),
			},
		},
		"data": data,
	}}
}

// Namespace is a namespace the controller creates for a component (when it
// may: serve --create-namespaces), labelled as tinyctl's.
func Namespace(name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("v1")
	obj.SetKind("Namespace")
	obj.SetName(name)
	obj.SetLabels(map[string]string{LabelManagedBy: ManagedByValue})
	return obj
}
