package render_test

import (
	"testing"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
	"github.com/tinyctl/tinyctl/render"
)

func TestStreamReplicasAreTheSpecsElseTheClusters(t *testing.T) {
	for _, tc := range []struct {
		name          string
		spec, cluster int
		want          int
	}{
		{"neither sets them", 0, 0, 1},
		{"the cluster's default", 0, 3, 3},
		{"the spec's own wins", 1, 3, 1},
		{"the spec's own on a single node", 3, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaults.Apply(component("replicated", api.Spec{}))
			c.Spec.Jobs.Stream.Replicas = tc.spec
			cl := testCluster()
			cl.Streams.Replicas = tc.cluster
			objs, err := render.Render(c, testRevision, cl)
			if err != nil {
				t.Fatal(err)
			}
			if objs.Stream.Replicas != tc.want {
				t.Fatalf("stream replicas = %d, want %d", objs.Stream.Replicas, tc.want)
			}
		})
	}
}

func TestClusterStreamReplicasBeyondJetStreamsAreRefused(t *testing.T) {
	cl := testCluster()
	cl.Streams.Replicas = 6
	if err := cl.Check(); err == nil {
		t.Fatal("Check accepted 6 stream replicas")
	}
}
