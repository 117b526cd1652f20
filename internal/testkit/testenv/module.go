package testenv

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// ModuleDir downloads module path at version through the Go module proxy
// (into the module cache, once) and returns its directory, for tests that
// need another project's published files, such as its CRDs. It fails the
// test when the module cannot be downloaded.
func ModuleDir(tb testing.TB, path, version string) string {
	tb.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", path+"@"+version).Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); jerr != nil || err != nil || mod.Error != "" {
		tb.Fatalf("go mod download %s@%s: %v %s", path, version, err, mod.Error)
	}
	return mod.Dir
}
