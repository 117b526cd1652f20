package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/localrun"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// buildWorker builds this example into a temporary directory.
func buildWorker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "worker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// thumbnailerComponent is examples/thumbnailer.yaml, defaulted and valid, with env
// appended to its spec.env.
func thumbnailerComponent(t *testing.T, env ...api.EnvVar) api.Component {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "thumbnailer.yaml"))
	testenv.Must(t, err)
	c, err := decode.Component(b)
	testenv.Must(t, err)
	c.Spec.Env = append(c.Spec.Env, env...)
	c, err = validate.Normalize(c)
	testenv.Must(t, err)
	return c
}

// deploy does what the controller does for c on a cluster whose NATS is s
// (decentralized auth, per-component credentials): it renders c, ensures
// its stream and consumer with the controller's code and credentials, and
// mints the worker's credentials into credsDir, where the Deployment's
// credentials volume would be. It returns the rendered objects and the
// worker's environment.
func deploy(t *testing.T, s *natstest.Server, c api.Component, credsDir string) (render.Objects, []string) {
	t.Helper()
	o, err := render.Render(c, 1, render.Cluster{NATS: render.NATS{URL: s.URL(), CredentialsSecret: render.PerComponent}})
	testenv.Must(t, err)
	conn := natstest.BusConnect(t, s.BusConfig(), nil)
	_, err = streams.New(conn, 0).EnsureStreamAndConsumer(testenv.Ctx(t, 10*time.Second), o.Stream, o.Consumer, streams.EnsureOptions{})
	testenv.Must(t, err)

	md := c.Metadata
	perms := identity.Worker(identity.DefaultAPIPrefix, o.Stream.Name, o.Consumer.Durable, render.InboxPrefix(md.Namespace, md.Name), c.Spec.Jobs.Publish)
	creds, err := s.Keys(t).Signer().Mint(identity.Name("worker", md.Namespace, md.Name), perms, time.Now(), time.Hour)
	testenv.Must(t, err)
	env, err := localrun.Env(o.Deployment, map[string]string{render.CredentialsDir: credsDir})
	testenv.Must(t, err)
	credsPath := path.Join(credsDir, render.DefaultCredentialsKey)
	if !contains(env, "NATS_CREDS="+credsPath) {
		t.Fatalf("the rendered environment %v does not point NATS_CREDS at %s", env, credsPath)
	}
	testenv.Must(t, os.WriteFile(credsPath, creds.File, 0o400))
	return o, env
}

func contains(env []string, kv string) bool {
	for _, e := range env {
		if e == kv {
			return true
		}
	}
	return false
}

// queueState is the stream's and the consumer's view of the jobs.
func queueState(t *testing.T, js jetstream.JetStream, o render.Objects) (*jetstream.StreamInfo, *jetstream.ConsumerInfo) {
	t.Helper()
	ctx := testenv.Ctx(t, 5*time.Second)
	st, err := js.Stream(ctx, o.Stream.Name)
	testenv.Must(t, err)
	si, err := st.Info(ctx)
	testenv.Must(t, err)
	cons, err := st.Consumer(ctx, o.Consumer.Durable)
	testenv.Must(t, err)
	ci, err := cons.Info(ctx)
	testenv.Must(t, err)
	return si, ci
}

// readRecord parses the worker's record: per job id, the attempts it
// recorded, in order.
func readRecord(t *testing.T, file string) (map[string][]int, int) {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil, 0
	}
	testenv.Must(t, err)
	defer f.Close()
	out, lines := map[string][]int{}, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue // a line being written
		}
		attempt, err := strconv.Atoi(fields[1])
		if err != nil {
			t.Fatalf("record line %q: %v", sc.Text(), err)
		}
		out[fields[0]] = append(out[fields[0]], attempt)
		lines++
	}
	return out, lines
}

// waitRecorded waits until the record holds at least n lines.
func waitRecorded(t *testing.T, file string, n int) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		if _, lines := readRecord(t, file); lines < n {
			return fmt.Errorf("%d jobs recorded, waiting for %d", lines, n)
		}
		return nil
	})
}
