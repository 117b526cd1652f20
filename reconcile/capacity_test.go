package reconcile_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/reasons"
	"github.com/tinyctl/tinyctl/internal/testenv"
	"github.com/tinyctl/tinyctl/reconcile"
)

// TestAFullJetStreamIsRetriedUntilThereIsRoom: while the broker has no
// storage left for a component's stream, the component is retried (Ready
// False, reason Retrying, not Stalled); once room is made, it becomes
// Ready at the same revision, with nothing republished.
func TestAFullJetStreamIsRetriedUntilThereIsRoom(t *testing.T) {
	e := newEnv(t, reconcile.Config{})
	ctx := context.Background()
	// A stream reserves its byte limit from the server's store: this one
	// leaves 16 MiB.
	room := e.nats.Server().JetStreamConfig().MaxStore
	_, err := e.js.CreateStream(ctx, jetstream.StreamConfig{Name: "hog", Subjects: []string{"hog.>"}, MaxBytes: room - 16<<20})
	testenv.Must(t, err)
	e.start()

	rev := e.publish(e.component("roomy", func(c *api.Component) { c.Spec.Jobs.Stream.MaxBytes = 32 << 20 }))
	rec := e.waitStatus("roomy", api.ConditionReady, "False", rev)
	r, _ := condition(rec.Conditions, api.ConditionReady)
	if r.Reason != reasons.Retrying {
		t.Errorf("Ready = %+v, want reason Retrying while storage is exhausted", r)
	}
	testenv.Must(t, e.js.DeleteStream(ctx, "hog"))
	e.waitStatus("roomy", api.ConditionReady, "True", rev)
}
