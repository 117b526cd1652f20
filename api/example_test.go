package api_test

import (
	"fmt"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
)

// Canonical is the stored form: the same content always gives the same
// bytes, whatever the order it was written in.
func ExampleCanonical() {
	c, _ := decode.Component([]byte(`{"kind":"Component","apiVersion":"tinyctl.io/v1alpha1",
		"spec":{"jobs":{"subjects":["jobs.>"]},"image":"acme/x:1","egress":"cluster"},"metadata":{"name":"x"}}`))
	b, _ := api.Canonical(c)
	fmt.Println(string(b))
	// Output:
	// {"apiVersion":"tinyctl.io/v1alpha1","kind":"Component","metadata":{"name":"x"},"spec":{"image":"acme/x:1","jobs":{"subjects":["jobs.>"]},"egress":"cluster"}}
}
