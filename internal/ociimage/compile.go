package ociimage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// compile builds dir's ./cmd/tinyctl for p into work as a static, stripped
// binary (CGO_ENABLED=0, -trimpath, -s -w) with main.version set to
// version and the build tags given, and returns its path. It runs the go
// command on PATH, so it shares the build cache. Its error carries the
// compiler's output.
func compile(ctx context.Context, dir, work string, p v1.Platform, version, tags string) (string, error) {
	out := filepath.Join(work, "tinyctl-"+p.OS+"-"+p.Architecture+p.Variant)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", tags,
		"-ldflags", "-s -w -X main.version="+version, "-o", out, "./cmd/tinyctl")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=")
	if p.Architecture == "arm" && p.Variant != "" {
		cmd.Env = append(cmd.Env, "GOARM="+p.Variant[1:])
	}
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build for %s: %w\n%s", p, err, msg.Bytes())
	}
	return out, nil
}

// source reads the commit dir is checked out at, "-dirty" appended when
// it has uncommitted changes, and the commit's time, from git. Without git
// or a repository both are zero: the image then has no revision label and
// the Unix epoch as its time.
func source(ctx context.Context, dir string) (revision string, at time.Time) {
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	revision = git("rev-parse", "HEAD")
	if revision == "" {
		return "", time.Time{}
	}
	at, _ = time.Parse(time.RFC3339, git("log", "-1", "--format=%cI"))
	if git("status", "--porcelain", "--untracked-files=no") != "" {
		revision += "-dirty"
	}
	return revision, at
}
