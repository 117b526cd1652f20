package ociimage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// compile builds package pkg of the module in dir for p into out as a
// static, stripped binary (CGO_ENABLED=0, -trimpath, -s -w, plus ldflags)
// with the build tags given, and returns out. It runs the go command on
// PATH, so it shares the build cache. Its error carries the compiler's
// output.
func compile(ctx context.Context, dir, pkg, out string, p v1.Platform, tags, ldflags string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", tags,
		"-ldflags", strings.TrimSpace("-s -w "+ldflags), "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=")
	if p.Architecture == "arm" && p.Variant != "" {
		cmd.Env = append(cmd.Env, "GOARM="+p.Variant[1:])
	}
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s for %s: %w\n%s", pkg, p, err, msg.Bytes())
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
