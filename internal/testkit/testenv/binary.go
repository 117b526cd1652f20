package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildTinyctl builds the tinyctl command from the source tree at or above
// the working directory into a temporary directory, for tests that run the
// binary as a user would. cleanup removes it.
func BuildTinyctl() (path string, cleanup func(), err error) {
	root, err := RepoRoot()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "tinyctl-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, "tinyctl")
	cmd := exec.Command("go", "build", "-o", path, "./cmd/tinyctl")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build tinyctl: %w\n%s", err, out)
	}
	return path, cleanup, nil
}

// RepoRoot walks up from the working directory to tinyctl's go.mod and
// returns that directory: the module's root.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/tinyctl/tinyctl\n") {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("testenv: no tinyctl source tree at or above %s", wd)
		}
	}
}
