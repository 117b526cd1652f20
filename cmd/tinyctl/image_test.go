//go:build !noinstall

package main

import (
	"testing"

	"github.com/tinyctl/tinyctl/internal/ociimage"
)

// TestChartImageIsTheOneTheBuilderMakes renders the controller chart with
// its defaults and wants its image to be the one `go tool task image`
// builds by default and the one a release build's install passes, and the
// chart's pod user to be the image's.
func TestChartImageIsTheOneTheBuilderMakes(t *testing.T) {
	dep := controllerDeployment(t, nil)
	got := dep.Spec.Template.Spec.Containers[0].Image
	built, err := ociimage.DefaultReference()
	if err != nil {
		t.Fatal(err)
	}
	version, err := ociimage.DefaultVersion()
	if err != nil {
		t.Fatal(err)
	}
	if got != built || releasedImage(version) != built {
		t.Errorf("chart image %s, task image builds %s, tinyctl %s install passes --image %s; want one reference",
			got, built, version, releasedImage(version))
	}
	if sc := dep.Spec.Template.Spec.SecurityContext; sc.RunAsUser == nil || *sc.RunAsUser != ociimage.UID {
		t.Errorf("chart runs the controller as user %v, the image's user is %d", sc.RunAsUser, ociimage.UID)
	}
}
