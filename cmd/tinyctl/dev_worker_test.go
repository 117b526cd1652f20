package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// checkLocalWorkers checks what `tinyctl dev` printed about local workers,
// publishes one job to the thumbnailer, and waits until its local worker
// has acked it, counted by the stream and the consumer. It returns the
// worker's pid.
func checkLocalWorkers(t *testing.T, out, natsURL string) int {
	t.Helper()
	for _, want := range []string{
		`docs/pdf-extractor: no local worker: no pods run in dev mode; set metadata.annotations["dev.tinyctl.io/run"]`,
		`search/search-indexer: no local worker: its placement does not select cluster "dev"`,
		"media/thumbnailer: local worker started: go run ./examples/worker (pid ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dev output lacks %q", want)
		}
	}
	m := regexp.MustCompile(`media/thumbnailer: local worker started: .* \(pid (\d+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pid of the thumbnailer's local worker in:\n%s", out)
	}
	pid, _ := strconv.Atoi(m[1])

	nc, err := nats.Connect(natsURL)
	testenv.Must(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	testenv.Must(t, err)
	testenv.Eventually(t, time.Minute, func() error { // the controller makes the stream
		_, err := js.Publish(testenv.Ctx(t, 2*time.Second), "media.thumbnail.small", []byte(`{"image":"s3://media/dev.png","sizes":[64]}`),
			jetstream.WithMsgID("dev-job-1")) // a retried publish is stored once
		return err
	})
	// `go run` compiles the worker first: minutes on a cold build cache.
	testenv.Eventually(t, 3*time.Minute, func() error {
		ctx := testenv.Ctx(t, 2*time.Second)
		st, err := js.Stream(ctx, "tinyctl_media_thumbnailer")
		if err != nil {
			return err
		}
		cons, err := st.Consumer(ctx, "tinyctl_media_thumbnailer_worker")
		if err != nil {
			return err
		}
		ci, err := cons.Info(ctx)
		if err != nil {
			return err
		}
		si, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if si.State.LastSeq != 1 || si.State.Msgs != 0 || ci.AckFloor.Stream != 1 || ci.NumAckPending != 0 {
			return fmt.Errorf("stream: %d published, %d waiting; consumer: ack floor %d, %d unacked",
				si.State.LastSeq, si.State.Msgs, ci.AckFloor.Stream, ci.NumAckPending)
		}
		return nil
	})
	return pid
}
