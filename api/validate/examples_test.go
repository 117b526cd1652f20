package validate_test

import (
	"testing"

	"github.com/tinyctl/tinyctl/api/apitest"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/api/validate"
)

func TestExamplesAreValid(t *testing.T) {
	for name, data := range apitest.ExampleFiles(t) {
		t.Run(name, func(t *testing.T) {
			c, err := decode.Component(data)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate.AsError(validate.Component(defaults.Apply(c))); err != nil {
				t.Fatal(err)
			}
			if w := validate.Warnings(defaults.Apply(c)); len(w) > 0 {
				t.Errorf("an example should not draw warnings: %q", w)
			}
		})
	}
}
