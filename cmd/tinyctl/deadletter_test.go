package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// namespacePublisher mints a publisher of namespace ns (tinyctl identity
// publisher) and returns a user holding its credentials.
func (in *installed) namespacePublisher(ns, name string) *user {
	t := in.t
	creds := filepath.Join(in.admin.home, name+".creds")
	in.admin.must(append([]string{"identity", "publisher", ns, "--name", name, "-o", creds, "--nats-url", in.url}, in.kubeArgs...)...)
	return &user{t: t, home: t.TempDir(), env: []string{"TINYCTL_NATS_URL=" + in.url, "TINYCTL_NATS_CREDS=" + creds,
		"TINYCTL_NATS_CONTEXT=", "TINYCTL_REQUEST_TIMEOUT=10s"}}
}

// TestDeadJobsAreMovedListedAndReplayed, on an installed runtime (accounts,
// the controller as the chart runs it): a component with
// spec.jobs.deadLetter whose worker, with its own credentials, fails two
// jobs on each of their two deliveries. The controller moves both out of
// the work queue into the dead-letter stream; the namespace's publisher
// lists them (subject, deliveries, data, headers), sees them in describe,
// replays one, which its worker then gets as it was sent, and the rest. A
// publisher of another namespace is refused, and a component without dead
// letters says so.
func TestDeadJobsAreMovedListedAndReplayed(t *testing.T) {
	a, b := kube.RestrictedNamespace(t), kube.RestrictedNamespace(t)
	in := installWithJWT(t, a+","+b)
	spec := strings.Replace(componentYAML(a, "thumbs", a+".thumbs.>", ""), "  jobs:\n",
		"  jobs:\n    deadLetter: true\n    consumer: {maxDeliver: 2, ackWait: 1m}\n", 1)
	pa := in.namespacePublisher(a, "team-a")
	pa.must("apply", "-f", pa.file("a.yaml", spec))
	pa.must("apply", "-f", pa.file("plain.yaml", componentYAML(a, "plain", a+".plain.>", "")))
	in.publisher.must("apply", "-f", in.publisher.file("b.yaml", componentYAML(b, "billing", b+".bill.>", "")))
	w := in.startWorker(a, "thumbs")
	cons, err := w.js.Consumer(testenv.Ctx(t, 10*time.Second), render.StreamName(a, "thumbs"), render.ConsumerName(a, "thumbs"))
	testenv.Must(t, err)

	pjs, err := jetstream.New(in.producer(a, a+".thumbs.>"))
	testenv.Must(t, err)
	job := nats.NewMsg(a + ".thumbs.png")
	job.Data, job.Header = []byte(`{"image":"cat.png"}`), nats.Header{"Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
	testenv.Eventually(t, 30*time.Second, func() error { _, err := pjs.PublishMsg(testenv.Ctx(t, 5*time.Second), job); return err })
	_, err = pjs.Publish(testenv.Ctx(t, 5*time.Second), a+".thumbs.gif", []byte("dog.gif"))
	testenv.Must(t, err)
	expect(t, pa.must("describe", "thumbs", "-n", a), 0, []string{"  Jobs:           2 (", "  Dead letters:   0"}, nil)

	// The worker fails every delivery (two each): both jobs die.
	deliveries := 0
	testenv.Eventually(t, 30*time.Second, func() error {
		batch, err := cons.Fetch(10, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return err
		}
		for m := range batch.Messages() {
			deliveries++
			testenv.Must(t, m.Nak())
		}
		r := pa.run("jobs", "dead", "thumbs", "-n", a, "-o", "json")
		var list deadletter.ListReply
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || list.Total != 2 {
			return fmt.Errorf("after %d deliveries, jobs dead: %s", deliveries, r)
		}
		return nil
	})
	if deliveries != 4 {
		t.Errorf("the worker was handed %d deliveries, want 4 (two jobs, maxDeliver 2)", deliveries)
	}
	expect(t, pa.must("describe", "thumbs", "-n", a), 0, []string{"  Jobs:           0 (", "  Dead letters:   2 (tinyctl jobs dead thumbs)"}, nil)
	r := pa.must("jobs", "dead", "thumbs", "-n", a)
	expect(t, r, 0, []string{"SEQ", "SUBJECT", "DELIVERIES", a + ".thumbs.png   2", `{"image":"cat.png"}`, a + ".thumbs.gif   2", "dog.gif"}, nil)
	var list deadletter.ListReply
	testenv.Must(t, json.Unmarshal([]byte(pa.must("jobs", "dead", "thumbs", "-n", a, "-o", "json").stdout), &list))
	png := list.Jobs[0]
	if png.Subject != a+".thumbs.png" || png.Deliveries != 2 || string(png.Data) != `{"image":"cat.png"}` || png.Headers["Traceparent"] == "" {
		t.Fatalf("the first dead job: %+v", png)
	}

	// One back: the worker gets it as it was sent.
	expect(t, pa.must("jobs", "replay", "thumbs", "-n", a, "--seq", fmt.Sprint(png.Sequence)), 0, []string{"1 dead jobs of " + a + "/thumbs replayed"}, nil)
	batch, err := cons.Fetch(5, jetstream.FetchMaxWait(5*time.Second))
	testenv.Must(t, err)
	var got []string
	for m := range batch.Messages() {
		got = append(got, m.Subject()+" "+string(m.Data())+" "+m.Headers().Get("Traceparent"))
		testenv.Must(t, m.Ack())
	}
	if len(got) != 1 || got[0] != a+".thumbs.png "+`{"image":"cat.png"}`+" "+job.Header.Get("Traceparent") {
		t.Fatalf("after replaying one, the worker got %q, want the png job as sent", got)
	}
	expect(t, pa.run("jobs", "replay", "thumbs", "-n", a, "--seq", fmt.Sprint(png.Sequence)), 1, nil, []string{"no dead job with sequence"})
	expect(t, pa.must("jobs", "replay", "thumbs", "-n", a, "--all"), 0, []string{"1 dead jobs of " + a + "/thumbs replayed"}, nil)
	expect(t, pa.must("jobs", "dead", "thumbs", "-n", a), 0, []string{"no dead jobs of " + a + "/thumbs (0 in all)"}, nil)

	// Bad input, and what is not one's own.
	expect(t, pa.run("jobs", "replay", "thumbs", "-n", a), 2, nil, []string{"name the dead jobs to replay: --all, or --seq"})
	expect(t, pa.run("jobs", "dead", "plain", "-n", a), 1, nil, []string{"component " + a + ".plain has no dead-letter stream on this cluster"})
	expect(t, pa.run("jobs", "dead", "billing", "-n", b), 1, nil, []string{"scoped to namespace"})
	nc, err := nats.Connect(in.url, nats.UserCredentials(filepath.Join(in.admin.home, "team-a.creds")))
	testenv.Must(t, err)
	defer nc.Close()
	if _, err := nc.Request(deadletter.ReplaySubject(b, "billing"), []byte(`{"all":true}`), 2*time.Second); err == nil {
		t.Errorf("%s's publisher sent a replay request for %s and it was answered", a, b)
	}
	expect(t, in.publisher.must("jobs", "dead", "thumbs", "-n", a), 0, []string{"no dead jobs of " + a + "/thumbs"}, nil) // the admin's
	expect(t, in.publisher.run("jobs", "dead", "billing", "-n", b), 1, nil, []string{"has no dead-letter stream"})
}
