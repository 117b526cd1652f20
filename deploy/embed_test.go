package deploy_test

import (
	"io/fs"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/deploy"
)

// TestCRDsDecode checks that every embedded CRD is a well-formed
// apiextensions.k8s.io/v1 CustomResourceDefinition whose file is named for
// it, with a structural schema on every version (types everywhere).
func TestCRDsDecode(t *testing.T) {
	files, err := fs.Glob(deploy.CRDs, "crds/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("embedded CRDs = %v, %v; want at least one", files, err)
	}
	for _, f := range files {
		b, err := deploy.CRDs.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if want := "crds/" + crd.Name + ".yaml"; f != want {
			t.Errorf("%s holds CRD %s, want it in %s", f, crd.Name, want)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				t.Errorf("%s version %s has no schema", f, v.Name)
				continue
			}
			assertTyped(t, f+" "+v.Name, "", *v.Schema.OpenAPIV3Schema)
		}
	}
}

// assertTyped walks a schema and fails on a node without a type, the first
// rule of a structural schema.
func assertTyped(t *testing.T, file, path string, s apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	if s.Type == "" && !s.XIntOrString {
		t.Errorf("%s: %s has no type", file, path)
	}
	for name, p := range s.Properties {
		assertTyped(t, file, path+"."+name, p)
	}
	if s.Items != nil && s.Items.Schema != nil {
		assertTyped(t, file, path+"[]", *s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		assertTyped(t, file, path+"{}", *s.AdditionalProperties.Schema)
	}
}

// TestScaledObjectCRDIsEmbedded checks the named accessor matches the file.
func TestScaledObjectCRDIsEmbedded(t *testing.T) {
	b, err := deploy.CRDs.ReadFile("crds/scaledobjects.keda.sh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(deploy.ScaledObjectCRD) {
		t.Error("ScaledObjectCRD differs from crds/scaledobjects.keda.sh.yaml")
	}
}
