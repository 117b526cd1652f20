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

// NodeBinaries are the paths of a node's Kubernetes executables, built
// from the same module as the control plane's (EnsureNodeBinaries).
type NodeBinaries struct {
	Kubelet           string
	ControllerManager string
	Scheduler         string
	Proxy             string
}

// toolsModule is where tools/kube lives relative to the repository root.
const toolsModule = "tools/kube"

// target is one binary of the tools module: its file name and package.
type target struct{ out, pkg string }

// binarySet is a group of targets cached together in one directory.
type binarySet struct {
	name    string // the cache directory's prefix
	targets []target
}

var (
	controlPlaneSet = binarySet{name: "kube", targets: []target{
		{"etcd", "./etcd"},
		{"kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"},
	}}
	nodeSet = binarySet{name: "node", targets: []target{
		{"kubelet", "k8s.io/kubernetes/cmd/kubelet"},
		{"kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager"},
		{"kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler"},
		{"kube-proxy", "k8s.io/kubernetes/cmd/kube-proxy"},
	}}
)

// EnsureBinaries returns the control-plane binaries, building them from the
// tools/kube module when the cache does not hold them yet. Progress goes to
// log. It needs either EnvBinDir, or a tinyctl source tree at or above the
// working directory and a Go toolchain; the first build takes minutes.
func EnsureBinaries(ctx context.Context, log io.Writer) (Binaries, error) {
	dir, err := ensure(ctx, log, controlPlaneSet)
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{Etcd: filepath.Join(dir, "etcd"), APIServer: filepath.Join(dir, "kube-apiserver")}, nil
}

// EnsureNodeBinaries returns kubelet, kube-controller-manager,
// kube-scheduler and kube-proxy, built like EnsureBinaries' (at
// KubeVersion, from tools/kube) when the cache does not hold them yet:
// about 12 minutes on 2 cores the first time, most of it kubelet.
func EnsureNodeBinaries(ctx context.Context, log io.Writer) (NodeBinaries, error) {
	dir, err := ensure(ctx, log, nodeSet)
	if err != nil {
		return NodeBinaries{}, err
	}
	return NodeBinaries{
		Kubelet:           filepath.Join(dir, "kubelet"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Scheduler:         filepath.Join(dir, "kube-scheduler"),
		Proxy:             filepath.Join(dir, "kube-proxy"),
	}, nil
}

// ensure returns the directory holding every target of set: EnvBinDir
// when set, else the cache directory, built first when incomplete. Builds
// are serialized across processes by a lock file.
func ensure(ctx context.Context, log io.Writer, set binarySet) (string, error) {
	if dir := os.Getenv(EnvBinDir); dir != "" {
		return dir, set.check(dir)
	}
	src, err := findToolsModule()
	if err != nil {
		return "", err
	}
	dir, err := cacheDir(src, set.name)
	if err != nil {
		return "", err
	}
	if set.check(dir) == nil {
		return dir, nil
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if set.check(dir) == nil {
		return dir, nil // another process built them while we waited
	}
	return dir, build(ctx, src, dir, set, log)
}

// check fails when a target of the set is missing from dir.
func (s binarySet) check(dir string) error {
	for _, t := range s.targets {
		p := filepath.Join(dir, t.out)
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s binary %s: %w", s.name, p, err)
		}
	}
	return nil
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
func cacheDir(src, set string) (string, error) {
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
	return filepath.Join(root, set+"-"+hex.EncodeToString(h.Sum(nil))[:16]), nil
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

// build compiles the set's binaries into a temporary directory and renames
// it into place, so a half-finished build is never mistaken for a cached
// one. Every binary is static (CGO_ENABLED=0) and reports KubeVersion.
func build(ctx context.Context, src, dir string, set binarySet, log io.Writer) error {
	var names []string
	for _, t := range set.targets {
		names = append(names, t.out)
	}
	fmt.Fprintf(log, "localkube: building %s %s into %s\n", strings.Join(names, ", "), KubeVersion, dir)
	fmt.Fprintln(log, "localkube: this happens once per tools/kube change and takes several minutes on 2 cores; later runs reuse it")
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return fmt.Errorf("build dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	ldflags := "-X k8s.io/component-base/version.gitVersion=" + KubeVersion +
		" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
	for _, t := range set.targets {
		start := time.Now()
		cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", ldflags, "-o", filepath.Join(tmp, t.out), t.pkg)
		cmd.Dir, cmd.Stdout, cmd.Stderr = src, log, log
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", t.out, err)
		}
		fmt.Fprintf(log, "localkube: built %s in %s\n", t.out, time.Since(start).Round(time.Second))
	}
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("install binaries: %w", err)
	}
	return set.check(dir)
}
