package localkube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// KubeVersion is the Kubernetes release the control plane is built from.
const KubeVersion = "v1.37.2"

// Env variables that change where binaries come from.
const (
	// EnvBinDir names a directory that already holds etcd and kube-apiserver;
	// when set, nothing is built.
	EnvBinDir = "TINYCTL_KUBE_BIN_DIR"
	// EnvCacheDir overrides the cache root (default: the user cache dir).
	EnvCacheDir = "TINYCTL_CACHE_DIR"
)

// Binaries are the paths of the control-plane executables.
type Binaries struct {
	Etcd      string
	APIServer string
}

// toolsModule is where tools/kube lives relative to the repository root.
const toolsModule = "tools/kube"

// EnsureBinaries returns the control-plane binaries, building them from the
// tools/kube module when the cache does not hold them yet. Progress goes to
// log. It needs either EnvBinDir, or a tinyctl source tree at or above the
// working directory and a Go toolchain; the first build takes minutes.
func EnsureBinaries(ctx context.Context, log io.Writer) (Binaries, error) {
	if dir := os.Getenv(EnvBinDir); dir != "" {
		return checkBinaries(dir)
	}
	src, err := findToolsModule()
	if err != nil {
		return Binaries{}, err
	}
	dir, err := cacheDir(src)
	if err != nil {
		return Binaries{}, err
	}
	if b, err := checkBinaries(dir); err == nil {
		return b, nil
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	if b, err := checkBinaries(dir); err == nil {
		return b, nil // another process built them while we waited
	}
	return build(ctx, src, dir, log)
}

func binaries(dir string) Binaries {
	return Binaries{Etcd: filepath.Join(dir, "etcd"), APIServer: filepath.Join(dir, "kube-apiserver")}
}

func checkBinaries(dir string) (Binaries, error) {
	b := binaries(dir)
	for _, p := range []string{b.Etcd, b.APIServer} {
		if _, err := os.Stat(p); err != nil {
			return Binaries{}, fmt.Errorf("control-plane binary %s: %w", p, err)
		}
	}
	return b, nil
}

// findToolsModule walks up from the working directory to the tinyctl
// repository root and returns its tools/kube directory.
func findToolsModule() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(gomod), "module github.com/tinyctl/tinyctl\n") {
			return filepath.Join(dir, toolsModule), nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no tinyctl source tree at or above %s: run from a clone, or set %s to a directory holding etcd and kube-apiserver", wd, EnvBinDir)
		}
	}
}

// cacheDir is keyed by the tools module's sources and the Go version, so a
// change to either builds afresh and an unchanged tree builds nothing.
func cacheDir(src string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), KubeVersion)
	for _, f := range []string{"go.mod", "go.sum", "etcd/main.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", fmt.Errorf("tools module: %w", err)
		}
		h.Write(b)
	}
	root := os.Getenv(EnvCacheDir)
	if root == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			uc = os.TempDir() // no $HOME: still works, just not shared across users
		}
		root = filepath.Join(uc, "tinyctl")
	}
	return filepath.Join(root, "kube-"+hex.EncodeToString(h.Sum(nil))[:16]), nil
}

func lockFile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cache dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// build compiles both binaries into a temporary directory and renames it
// into place, so a half-finished build is never mistaken for a cached one.
func build(ctx context.Context, src, dir string, log io.Writer) (Binaries, error) {
	fmt.Fprintf(log, "localkube: building etcd and kube-apiserver %s into %s\n", KubeVersion, dir)
	fmt.Fprintln(log, "localkube: this happens once per tools/kube change and takes several minutes on 2 cores; later runs reuse it")
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return Binaries{}, fmt.Errorf("build dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	ldflags := "-X k8s.io/component-base/version.gitVersion=" + KubeVersion +
		" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
	steps := []struct{ name, out, pkg, ldflags string }{
		{"etcd", "etcd", "./etcd", ""},
		{"kube-apiserver", "kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", ldflags},
	}
	for _, s := range steps {
		start := time.Now()
		cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", s.ldflags, "-o", filepath.Join(tmp, s.out), s.pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = src, log, log
		if err := cmd.Run(); err != nil {
			return Binaries{}, fmt.Errorf("build %s: %w", s.name, err)
		}
		fmt.Fprintf(log, "localkube: built %s in %s\n", s.name, time.Since(start).Round(time.Second))
	}
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		return Binaries{}, fmt.Errorf("install binaries: %w", err)
	}
	return checkBinaries(dir)
}
