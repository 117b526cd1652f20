package client_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/nats-io/nats.go"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/client"
)

// Publish a component, change it, read its history and roll it back, as
// `tinyctl apply`, `history` and `rollback` do. The example runs its own
// NATS server; a program would connect to the one its controllers use.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "tinyctl-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := bus.StartEmbedded(ctx, bus.EmbeddedConfig{Port: -1, StoreDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown(ctx)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	c, err := client.New(ctx, nc, client.Config{Create: true})
	if err != nil {
		log.Fatal(err)
	}
	resizer := api.Component{
		APIVersion: api.APIVersion, Kind: api.Kind,
		Metadata: api.Metadata{Name: "resizer", Namespace: "media"},
		Spec: api.Spec{
			Image: "registry.example.com/media/resizer:1.0.0",
			Jobs:  api.Jobs{Subjects: []string{"media.resize.>"}},
		},
	}
	for _, image := range []string{"resizer:1.0.0", "resizer:1.1.0", "resizer:1.1.0"} {
		resizer.Spec.Image = "registry.example.com/media/" + image
		res, err := c.Publish(ctx, resizer, client.PublishOptions{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("publish %s: %s, revision %d\n", image, res.Action, res.Revision)
	}

	hist, err := c.History(ctx, "media", "resizer")
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range client.Changes(hist, c.KeptRevisions()) {
		fmt.Printf("revision %d: %s\n", ch.Revision, ch.Summary)
	}

	rb, err := c.Rollback(ctx, "media", "resizer", 0)
	if err != nil {
		log.Fatal(err)
	}
	e, err := c.Get(ctx, "media", "resizer")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("rolled back to revision %d as revision %d: %s\n", rb.Target, rb.Revision, e.Component.Spec.Image)
	// Output:
	// publish resizer:1.0.0: created, revision 1
	// publish resizer:1.1.0: configured, revision 2
	// publish resizer:1.1.0: unchanged, revision 2
	// revision 1: created
	// revision 2: spec.image
	// rolled back to revision 1 as revision 3: registry.example.com/media/resizer:1.0.0
}
