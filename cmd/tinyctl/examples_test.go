package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/manifest"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// sendJob is an example's "# Send job: nats pub SUBJECT 'BODY'" line.
var sendJob = regexp.MustCompile(`(?m)^# Send job: nats pub (\S+) '(.*)'$`)

// TestEveryExampleSaysHowToSendItAJob: every example names at least one
// job to send, and each such job, published as the comment says, lands in
// the stream the example's component gets (its stream as render makes it,
// on a real server): the instructions cannot point at a subject the
// component does not consume.
func TestEveryExampleSaysHowToSendItAJob(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	testenv.Must(t, err)
	if len(files) < 5 {
		t.Fatalf("found %d examples, want the 5 of examples/", len(files))
	}
	js, err := jetstream.New(natstest.Start(t).Connect(t))
	testenv.Must(t, err)
	ctx := testenv.Ctx(t, time.Minute)
	sent := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		testenv.Must(t, err)
		set := manifest.Load([]manifest.Source{manifest.Bytes(f, b)}, manifest.Options{})
		if len(set.Problems) > 0 || len(set.Components) != 1 {
			t.Fatalf("%s: %v", f, set.Problems)
		}
		objs, err := render.Render(set.Components[0].Component, 1, render.DefaultCluster())
		testenv.Must(t, err)
		stream, err := js.CreateStream(ctx, objs.Stream)
		testenv.Must(t, err)
		jobs := sendJob.FindAllStringSubmatch(string(b), -1)
		if len(jobs) == 0 {
			t.Errorf("%s says nowhere how to send it a job (# Send job: nats pub SUBJECT 'BODY')", f)
		}
		for _, job := range jobs {
			if _, err := js.Publish(ctx, job[1], []byte(job[2])); err != nil {
				t.Errorf("%s: nats pub %s: %v (the component's stream takes %v)", f, job[1], err, objs.Stream.Subjects)
				continue
			}
			sent++
		}
		info, err := stream.Info(ctx)
		testenv.Must(t, err)
		if n := int(info.State.Msgs); n != len(jobs) {
			t.Errorf("%s: its stream holds %d jobs after the %d its comments send", f, n, len(jobs))
		}
	}
	t.Logf("%d jobs sent as the examples say, each stored in its component's stream", sent)
}
