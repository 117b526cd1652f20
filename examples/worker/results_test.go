package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/internal/localrun"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestTheThumbnailerPublishesItsResults runs the example worker with its
// minted credentials and THUMBNAIL_RESULTS set to the subject of the
// example's spec.jobs.publish: each job's result lands in the stream that
// holds that subject, once, in the job's trace; a job that is not JSON is
// given up with its reason and leaves the stream.
func TestTheThumbnailerPublishesItsResults(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.WithJWT())
	comp := thumbnailerComponent(t, api.EnvVar{Name: "THUMBNAIL_RESULTS", Value: "media.thumbnailed"}, api.EnvVar{Name: "THUMBNAIL_WORK", Value: "1ms"})
	if !slices.Contains(comp.Spec.Jobs.Publish, "media.thumbnailed") {
		t.Fatalf("examples/thumbnailer.yaml publishes %v, want media.thumbnailed among them", comp.Spec.Jobs.Publish)
	}
	objs, env := deploy(t, s, comp, t.TempDir())
	js, err := jetstream.New(s.Connect(t))
	testenv.Must(t, err)
	ctx := testenv.Ctx(t, time.Minute)
	results, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "thumbnailed", Subjects: []string{"media.thumbnailed"}})
	testenv.Must(t, err)

	out := &testenv.SyncBuffer{}
	p, err := localrun.Start(localrun.Command{Name: "media/thumbnailer", Argv: []string{buildWorker(t)}, Env: env}, out)
	testenv.Must(t, err)
	t.Cleanup(func() {
		_ = p.Stop(time.Second)
		if t.Failed() {
			t.Logf("worker output:\n%s", out)
		}
	})

	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	testenv.Must(t, publish(js, 0, 4))
	_, err = js.PublishMsg(ctx, &nats.Msg{Subject: "media.thumbnail.small", Data: []byte(`{"image":"s3://media/traced.png","sizes":[64]}`),
		Header: nats.Header{"traceparent": {"00-" + trace + "-00f067aa0ba902b7-01"}}}, jetstream.WithMsgID("traced"))
	testenv.Must(t, err)
	_, err = js.Publish(ctx, "media.thumbnail.small", []byte("not a job"), jetstream.WithMsgID("garbled"))
	testenv.Must(t, err)

	testenv.Eventually(t, 30*time.Second, func() error {
		si, ci := queueState(t, js, objs)
		if si.State.Msgs != 0 || ci.NumAckPending != 0 {
			return fmt.Errorf("the job stream holds %d jobs, %d unacked", si.State.Msgs, ci.NumAckPending)
		}
		ri, err := results.Info(ctx)
		if err != nil {
			return err
		}
		if ri.State.Msgs != 5 {
			return fmt.Errorf("the results stream holds %d results, want 5", ri.State.Msgs)
		}
		return nil
	})
	seen := map[string]bool{}
	for seq := uint64(1); seq <= 5; seq++ {
		m, err := results.GetMsg(ctx, seq)
		testenv.Must(t, err)
		var r result
		testenv.Must(t, json.Unmarshal(m.Data, &r))
		seen[r.Job] = true
		if len(r.Thumbnails) == 0 || !strings.HasPrefix(r.Thumbnails[0], r.Image+"@") {
			t.Errorf("result %s: %s", r.Job, m.Data)
		}
		if r.Job == "traced" && !strings.HasPrefix(m.Header.Get("traceparent"), "00-"+trace+"-") {
			t.Errorf("the traced job's result has traceparent %q, want one of trace %s", m.Header.Get("traceparent"), trace)
		}
	}
	for _, id := range []string{jobID(0), jobID(1), jobID(2), jobID(3), "traced"} {
		if !seen[id] {
			t.Errorf("no result for %s (results of %v)", id, seen)
		}
	}
	if !strings.Contains(out.String(), `"outcome":"term"`) || !strings.Contains(out.String(), "not a thumbnail job") {
		t.Errorf("the worker did not log giving up the garbled job:\n%s", out)
	}
}
