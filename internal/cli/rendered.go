package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
)

// RenderKind is the kind of the list `tinyctl render -o json` prints.
const RenderKind = "RenderList"

// Rendered is everything one component renders to: its Kubernetes objects
// in apply order and the JetStream stream and consumer configurations
// (in the JetStream API's JSON form).
type Rendered struct {
	Key      string                       `json:"key"`
	Objects  []*unstructured.Unstructured `json:"objects"`
	Stream   jetstream.StreamConfig       `json:"stream"`
	Consumer jetstream.ConsumerConfig     `json:"consumer"`
}

// RenderList is the machine-readable output of `tinyctl render`.
type RenderList struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Items      []Rendered `json:"items"`
}

// NewRenderList wraps items in a RenderList.
func NewRenderList(items []Rendered) RenderList {
	return RenderList{APIVersion: api.APIVersion, Kind: RenderKind, Items: items}
}

// WriteRenderedYAML writes each component's objects as YAML documents
// ("---" separated), each with a comment naming the component and what the
// document is, then its stream and consumer configurations, which are not
// Kubernetes objects (the controller creates them in JetStream).
func WriteRenderedYAML(w io.Writer, items []Rendered) error {
	for _, it := range items {
		for _, o := range it.Objects {
			if err := writeDoc(w, fmt.Sprintf("component %s: %s", it.Key, o.GetKind()), o); err != nil {
				return err
			}
		}
		note := "(JetStream API JSON, not a Kubernetes object; the controller creates it)"
		if err := writeDoc(w, fmt.Sprintf("component %s: JetStream stream %s %s", it.Key, it.Stream.Name, note), it.Stream); err != nil {
			return err
		}
		if err := writeDoc(w, fmt.Sprintf("component %s: JetStream consumer %s %s", it.Key, it.Consumer.Durable, note), it.Consumer); err != nil {
			return err
		}
	}
	return nil
}

// writeDoc writes one "---" document with a header comment.
func writeDoc(w io.Writer, header string, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", header, err)
	}
	y, err := JSONToYAML(j)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "---\n# %s\n%s", header, y)
	return err
}
