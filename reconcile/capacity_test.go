package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
)

// TestAFullJetStreamIsRetriedUntilThereIsRoom: while the broker has no
// room for the byte limit a component's stream asks for, the component
// waits (Ready False, reason InsufficientStorage, not Stalled) with a
// message naming the limit and what to change; once room is made, it
// becomes Ready at the same revision, with nothing republished.
func TestAFullJetStreamIsRetriedUntilThereIsRoom(t *testing.T) {
	e := newEnv(t, reconcile.Config{Recheck: time.Second})
	ctx := context.Background()
	// A stream sets its byte limit aside from the server's store: this
	// one leaves 16 MiB.
	room := e.nats.Server().JetStreamConfig().MaxStore
	_, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "hog", Subjects: []string{"hog.>"}, MaxBytes: room - 16<<20})
	testenv.Must(t, err)
	e.start()

	rev := e.publish(e.component("roomy", func(c *api.Component) { c.Spec.Jobs.Stream.MaxBytes = 32 << 20 }))
	rec := e.waitStatus("roomy", api.ConditionApplied, "False", rev)
	r, _ := condition(rec.Conditions, api.ConditionApplied)
	if r.Reason != reasons.InsufficientStorage || !strings.Contains(r.Message, "byte limit of 33554432 (spec.jobs.stream.maxBytes)") ||
		!strings.Contains(r.Message, "max_file_store") {
		t.Errorf("Ready = %+v, want reason InsufficientStorage naming the stream's byte limit and the store", r)
	}
	if s, _ := condition(rec.Conditions, api.ConditionStalled); s.Status == "True" {
		t.Errorf("Stalled = %+v while waiting for room", s)
	}
	testenv.Must(t, e.js.DeleteStream(ctx, "hog"))
	e.waitStatus("roomy", api.ConditionApplied, "True", rev)
}
