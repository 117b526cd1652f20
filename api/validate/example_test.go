package validate_test

import (
	"fmt"

	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/validate"
)

// Component reports every problem at once, each with its field path.
func ExampleComponent() {
	c, _ := decode.Component([]byte(`
apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata: {name: resizer}
spec:
  image: acme/resizer
  jobs: {subjects: ["jobs.resize.>", "jobs.resize.png"]}
  replicas: 2
  scaling: {minReplicas: 1, maxReplicas: 5}
`))
	fmt.Println(validate.AsError(validate.Component(defaults.Apply(c))))
	// Output:
	// invalid component (3 problems):
	// * spec.image: Invalid value: "acme/resizer": pin a tag or digest, e.g. worker:1.2.3 or worker@sha256:<64 hex digits>
	// * spec.jobs.subjects[1]: Invalid value: "jobs.resize.png": overlaps spec.jobs.subjects[0] ("jobs.resize.>"): a job matching both would be stored twice
	// * spec.replicas: Forbidden: may not be set together with spec.scaling: KEDA owns the replica count of a scaled component
}
