package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/internal/statusview"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/render"
)

// TestDescribeShowsSpecStatusQueueAndChildren describes a component whose
// queue holds three jobs: one handed to a worker a second time after a
// nak and not settled, two never handed out. The queue is the one a
// controller makes (its stream and consumer names) on a broker in one
// account; the tenancy test reads it through the accounts' imports.
func TestDescribeShowsSpecStatusQueueAndChildren(t *testing.T) {
	u := newUser(t)
	u.must("apply", "-f", u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0")))
	report(t, u.statuses(), ready("media.resizer", "east", 1, "True", "Reconciled"))

	ctx := testenv.Ctx(t, 30*time.Second)
	js, err := jetstream.New(u.nats.Connect(t))
	testenv.Must(t, err)
	stream, consumer := render.StreamName("media", "resizer"), render.ConsumerName("media", "resizer")
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{"media.resizer.>"}, Retention: jetstream.WorkQueuePolicy})
	testenv.Must(t, err)
	cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: consumer, AckPolicy: jetstream.AckExplicitPolicy, MaxDeliver: 5, AckWait: time.Minute})
	testenv.Must(t, err)
	publish := func(job string) {
		_, err := js.Publish(ctx, "media.resizer."+job, []byte(job))
		testenv.Must(t, err)
	}
	// The first job is handed out, naked, handed out again and held; the
	// other two arrive after it.
	publish("one")
	for i := range 2 {
		b, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
		testenv.Must(t, err)
		n := 0
		for m := range b.Messages() {
			n++
			if md, _ := m.Metadata(); md == nil || md.NumDelivered != uint64(i+1) {
				t.Fatalf("fetch %d: delivery %+v, want %d", i+1, md, i+1)
			}
			if i == 0 {
				testenv.Must(t, m.Nak())
			}
		}
		if n != 1 {
			t.Fatalf("fetch %d got %d jobs, want 1", i+1, n)
		}
	}
	publish("two")
	publish("three")

	r := u.must("describe", "resizer", "-n", "media")
	expect(t, r, 0, []string{
		"Name:           resizer", "Namespace:      media", "Revision:       1, published",
		"Image:          acme/resizer:1.0.0", "Subjects:       media.resizer.>", "Scaling:        1 pod",
		"Stream:         " + stream, "Consumer:       " + consumer,
		"  media       resizer   east      True    Reconciled   1/1",
		"  Jobs:           3 (", "the oldest published", "  Pending:        2 not yet handed to a worker",
		"  Ack pending:    1 being worked on", "  Redelivered:    1 of those", "  Max deliver:    5",
		"  Deployment/media/resizer", "  NetworkPolicy/media/resizer",
	}, nil)
	if strings.Contains(r.stdout, "PodDisruptionBudget") || strings.Contains(r.stdout, "Suspended") {
		t.Errorf("describe of one unsuspended pod shows a disruption budget or a suspension:\n%s", r)
	}

	var d statusview.Description
	testenv.Must(t, json.Unmarshal([]byte(u.must("describe", "resizer", "-n", "media", "-o", "json").stdout), &d))
	if d.Kind != "Description" || d.Queue == nil || d.Queue.Jobs != 3 || d.Queue.Pending != 2 || d.Queue.AckPending != 1 || d.Queue.Redelivered != 1 ||
		d.Queue.Oldest == nil || len(d.Clusters) != 1 || d.Component == nil || d.Component.Spec.Image != "acme/resizer:1.0.0" {
		t.Errorf("describe -o json: %+v (queue %+v)", d, d.Queue)
	}

	// status --queues shows the same figures in the row of east.
	r = u.must("status", "-n", "media", "--queues")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAMESPACE NAME CLUSTER READY JOBS PENDING ACK-PENDING REDELIVERED OLDEST HEARTBEAT" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "media resizer east True 3 2 1 1 ") {
		t.Errorf("status --queues:\n%s", r)
	}
	var list statusview.StatusList
	testenv.Must(t, json.Unmarshal([]byte(u.must("status", "-n", "media", "--queues", "-o", "json").stdout), &list))
	if len(list.Items) != 1 || list.Items[0].Queue == nil || list.Items[0].Queue.Jobs != 3 || list.Items[0].Queue.AckPending != 1 {
		t.Errorf("status --queues -o json: %+v", list.Items)
	}
	expect(t, u.run("status", "-n", "media", "--queues", "--watch"), 2, nil, []string{"--queues cannot be used with --watch or --wait-for"})
}

// TestDescribeSaysWhyThereIsNoQueue: a component no controller has
// reconciled has no stream yet; describe says so and where to look, and
// still shows the rest. A component that does not exist, or a bad -o, is
// an error.
func TestDescribeSaysWhyThereIsNoQueue(t *testing.T) {
	u := newUser(t)
	u.must("apply", "-f", u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0")))
	expect(t, u.must("describe", "resizer", "-n", "media"), 0, []string{
		"Image:          acme/resizer:1.0.0",
		"  media       resizer   -         Unknown   NotReconciled   -/1",
		"stream " + render.StreamName("media", "resizer") + ": not found on this broker: no controller has created it here yet",
		"  Deployment/media/resizer",
	}, nil)
	expect(t, u.run("describe", "nope", "-n", "media"), 1, nil, []string{`component "nope" not found in namespace "media"`})
	expect(t, u.run("describe", "resizer", "-n", "media", "-o", "wide"), 2, nil, []string{`unknown output format "wide": use one of text, yaml, json`})
	expect(t, u.run("describe", "-n", "media"), 2, nil, []string{"accepts 1 arg(s), received 0"})
}
