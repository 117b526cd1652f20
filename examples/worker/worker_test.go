package main

import (
	"context"
	"fmt"
	"path/filepath"
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

const jobs = 1000

// TestNoJobIsLostAcrossSIGTERMRestarts runs the example worker as a child
// process with exactly the environment its rendered Deployment gives it
// (and credentials minted with a worker's permissions where NATS_CREDS
// points), publishes 1,000 jobs while the worker is SIGTERMed and
// restarted twice, and checks every job was acked, more than once only on
// a redelivery, and that none waited for an ack-wait redelivery.
func TestNoJobIsLostAcrossSIGTERMRestarts(t *testing.T) {
	t.Parallel()
	s := natstest.Start(t, natstest.WithJWT())
	dir := t.TempDir()
	record := filepath.Join(dir, "record")
	comp := thumbnailerComponent(t, api.EnvVar{Name: "THUMBNAIL_RECORD", Value: record}, api.EnvVar{Name: "THUMBNAIL_WORK", Value: "5ms"})
	objs, env := deploy(t, s, comp, t.TempDir())
	bin := buildWorker(t)
	js, err := jetstream.New(s.Connect(t))
	testenv.Must(t, err)

	out := &testenv.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("worker output:\n%s", out)
		}
	})
	start := func() *localrun.Process {
		p, err := localrun.Start(localrun.Command{Name: "media/thumbnailer", Argv: []string{bin}, Env: env}, out)
		testenv.Must(t, err)
		t.Cleanup(func() { _ = p.Stop(time.Second) })
		return p
	}
	// restart SIGTERMs p while jobs [from, to) are published, and starts
	// the worker again once p has exited with status 0.
	restart := func(p *localrun.Process, from, to int) *localrun.Process {
		published := make(chan error, 1)
		go func() { published <- publish(js, from, to) }()
		begin := time.Now()
		if err := p.Stop(time.Minute); err != nil {
			t.Fatalf("worker exited with %v after SIGTERM, want status 0 (a clean drain)", err)
		}
		t.Logf("drained in %s", time.Since(begin).Round(time.Millisecond))
		testenv.Must(t, <-published)
		return start()
	}

	p := start()
	testenv.Must(t, publish(js, 0, 400))
	waitRecorded(t, record, 150)
	p = restart(p, 400, 700)
	waitRecorded(t, record, 550)
	p = restart(p, 700, jobs)

	// The consumer's ack wait is 30s: finishing well within it proves no
	// job was left for an ack-wait redelivery by a drain.
	if ack := objs.Consumer.AckWait; ack < 30*time.Second {
		t.Fatalf("ack wait %s: the deadline below must stay under it", ack)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		si, ci := queueState(t, js, objs)
		if si.State.Msgs != 0 || si.State.LastSeq != jobs || ci.NumPending != 0 || ci.NumAckPending != 0 || ci.AckFloor.Stream != jobs {
			return fmt.Errorf("stream: %d jobs left of %d published; consumer: %d pending, %d unacked, ack floor %d",
				si.State.Msgs, si.State.LastSeq, ci.NumPending, ci.NumAckPending, ci.AckFloor.Stream)
		}
		return nil
	})
	if err := p.Stop(time.Minute); err != nil {
		t.Fatalf("last worker exited with %v", err)
	}
	checkRecord(t, record)
	_, ci := queueState(t, js, objs)
	t.Logf("%d jobs, %d deliveries (%d handed back or redelivered); drains: %s",
		jobs, ci.Delivered.Consumer, ci.Delivered.Consumer-jobs, drainLines(out.String()))
}

// publish sends jobs [from, to) to the thumbnailer's subjects, each with
// its id as Nats-Msg-Id, and waits for the stream to store each.
func publish(js jetstream.JetStream, from, to int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := from; i < to; i++ {
		size := []string{"small", "large"}[i%2]
		msg := &nats.Msg{Subject: "media.thumbnail." + size, Data: fmt.Appendf(nil, `{"image":"s3://media/%04d.png","sizes":[64,256]}`, i)}
		if _, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(jobID(i))); err != nil {
			return fmt.Errorf("publish job %d: %w", i, err)
		}
	}
	return nil
}

func jobID(i int) string { return fmt.Sprintf("job-%04d", i) }

// checkRecord asserts every job was recorded, and recorded again only on a
// later delivery: a repeat of the same attempt would be a duplicate no
// redelivery explains.
func checkRecord(t *testing.T, record string) {
	t.Helper()
	got, lines := readRecord(t, record)
	again := 0
	for i := range jobs {
		attempts := got[jobID(i)]
		if len(attempts) == 0 {
			t.Errorf("%s was never recorded", jobID(i))
			continue
		}
		sorted := slices.Clone(attempts)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(attempts) {
			t.Errorf("%s recorded on attempts %v: a repeat without a redelivery", jobID(i), attempts)
		}
		again += len(attempts) - 1
	}
	if len(got) != jobs {
		t.Errorf("%d distinct jobs recorded, want %d", len(got), jobs)
	}
	t.Logf("record: %d lines, %d jobs, %d recorded again after a redelivery", lines, len(got), again)
}

// drainLines picks the workers' "draining" log lines: how many jobs were
// running when each SIGTERM arrived.
func drainLines(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "draining") {
			if i := strings.Index(l, `"running":`); i >= 0 {
				fmt.Fprintf(&b, "[%s] ", strings.SplitN(l[i:], ",", 2)[0])
			}
		}
	}
	return b.String()
}
