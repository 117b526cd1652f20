package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// The tests of this package run the built binary as a user would.
var (
	binary string
	kube   *testenv.Kube
)

func TestMain(m *testing.M) { testenv.RunWithKubeAndTinyctl(m, &kube, &binary) }

// user is a person at a shell: a home directory, environment variables and
// a NATS server their TINYCTL_NATS_URL points at.
type user struct {
	t    *testing.T
	nats *natstest.Server
	home string
	env  []string
}

// newUser starts a NATS server (with opts) for one test and a clean
// environment pointing at it, without the developer's own settings.
func newUser(t *testing.T, opts ...natstest.Option) *user {
	t.Helper()
	s := natstest.Start(t, opts...)
	return &user{t: t, nats: s, home: t.TempDir(), env: []string{
		"TINYCTL_NATS_URL=" + s.URL(),
		"TINYCTL_REQUEST_TIMEOUT=10s",
	}}
}

// result is what a run printed and its exit code.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// run runs tinyctl with args and no standard input.
func (u *user) run(args ...string) result { return u.runIn("", nil, args...) }

// runIn runs tinyctl with stdin and extra environment variables.
func (u *user) runIn(stdin string, extraEnv []string, args ...string) result {
	u.t.Helper()
	return u.runWithin(time.Minute, stdin, extraEnv, args...)
}

// runWithin is runIn for a command given more than a minute (it is
// killed after within: exit -1).
func (u *user) runWithin(within time.Duration, stdin string, extraEnv []string, args ...string) result {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append([]string{"HOME=" + u.home, "PATH=" + os.Getenv("PATH")}, append(u.env, extraEnv...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		u.t.Fatalf("run tinyctl %v: %v", args, err)
	}
	testenv.NoSecrets(u.t, "tinyctl "+strings.Join(args, " "), out.String()+errOut.String())
	return result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String()}
}

// must runs tinyctl and fails the test unless it exits 0.
func (u *user) must(args ...string) result {
	u.t.Helper()
	r := u.run(args...)
	if r.code != 0 {
		u.t.Fatalf("tinyctl %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// file writes text into a file of the test's temp dir and returns its path.
func (u *user) file(name, text string) string {
	u.t.Helper()
	path := filepath.Join(u.home, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		u.t.Fatal(err)
	}
	return path
}

// specs opens the spec bucket directly, as the controller would.
func (u *user) specs(bucket string) *specs.Store {
	u.t.Helper()
	conn, err := bus.NewConn(u.nats.Connect(u.t), nil)
	if err != nil {
		u.t.Fatal(err)
	}
	s, err := specs.Open(context.Background(), conn, specs.Config{Bucket: bucket}, kv.Ensure)
	if err != nil {
		u.t.Fatal(err)
	}
	return s
}

// keys lists the keys of bucket, or none when the bucket does not exist.
func (u *user) keys(bucket string) []string {
	u.t.Helper()
	js, err := jetstream.New(u.nats.Connect(u.t))
	if err != nil {
		u.t.Fatal(err)
	}
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		u.t.Fatal(err)
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil
	}
	if err != nil {
		u.t.Fatal(err)
	}
	return keys
}

// expect checks a run's exit code and that each of its outputs contains
// the given texts.
func expect(t *testing.T, r result, code int, stdout, stderr []string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\n%s", r.code, code, r)
	}
	for _, s := range stdout {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q\n%s", s, r)
		}
	}
	for _, s := range stderr {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q\n%s", s, r)
		}
	}
}

// component is a valid component document.
func component(namespace, name, image string) string {
	return fmt.Sprintf(`apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata:
  name: %s
  namespace: %s
spec:
  image: %s
  jobs:
    subjects: ["%s.%s.>"]
`, name, namespace, image, namespace, name)
}
