package api_test

import (
	"fmt"

	"github.com/tinyctl/tinyctl/api"
)

// Decode a component, fill its defaults and validate it before publishing.
func ExampleDecode() {
	c, err := api.Decode([]byte(`
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
	c, err = api.Normalize(c)
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

// Validate reports every problem at once, each with its field path.
func ExampleValidate() {
	c, _ := api.Decode([]byte(`
apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: resizer}
spec:
  image: acme/resizer
  jobs: {subjects: ["jobs.resize.>", "jobs.resize.png"]}
  replicas: 2
  scaling: {minReplicas: 1, maxReplicas: 5}
`))
	fmt.Println(api.ValidationError(api.Validate(api.Default(c))))
	// Output:
	// invalid component (3 problems):
	// * spec.image: Invalid value: "acme/resizer": pin a tag or digest, e.g. worker:1.2.3 or worker@sha256:<64 hex digits>
	// * spec.jobs.subjects[1]: Invalid value: "jobs.resize.png": overlaps spec.jobs.subjects[0] ("jobs.resize.>"): a job matching both would be stored twice
	// * spec.replicas: Forbidden: may not be set together with spec.scaling: KEDA owns the replica count of a scaled component
}

// Decode refuses unknown fields and names them with their path.
func ExampleDecode_unknownField() {
	_, err := api.Decode([]byte(`
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

// Canonical is the stored form: the same content always gives the same
// bytes, whatever the order it was written in.
func ExampleCanonical() {
	c, _ := api.Decode([]byte(`{"kind":"Component","apiVersion":"tinyctl.io/v1alpha1",
		"spec":{"jobs":{"subjects":["jobs.>"]},"image":"acme/x:1","egress":"cluster"},"metadata":{"name":"x"}}`))
	b, _ := api.Canonical(c)
	fmt.Println(string(b))
	// Output:
	// {"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"x"},"spec":{"image":"acme/x:1","jobs":{"subjects":["jobs.>"]},"egress":"cluster"}}
}
