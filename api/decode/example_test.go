package decode_test

import (
	"fmt"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/validate"
)

// Decode a component, fill its defaults and validate it before publishing.
func ExampleComponent() {
	c, err := decode.Component([]byte(`
apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: pdf-extractor, namespace: docs}
spec:
  image: registry.example.com/docs/pdf-extractor:1.4.2
  jobs: {subjects: ["jobs.extract.pdf"]}
  scaling: {minReplicas: 0, maxReplicas: 10}
  egress: none
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err = validate.Normalize(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(api.Key(c.Metadata.Namespace, c.Metadata.Name))
	fmt.Println(c.Spec.Jobs.Consumer.AckWait, c.Spec.Scaling.LagThreshold)
	// Output:
	// docs.pdf-extractor
	// 30s 10
}

// Component refuses unknown fields and names them with their path.
func ExampleComponent_unknownField() {
	_, err := decode.Component([]byte(`
apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: resizer}
spec:
  image: acme/resizer:1
  jobs: {subjects: ["jobs.resize"], consumer: {maxRetries: 3}}
`))
	fmt.Println(err)
	// Output:
	// decode component: unknown field "spec.jobs.consumer.maxRetries"
}
