package serve

import (
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/bus"
)

func TestReplicasAreCheckedAndGiveStreamsTheirDefault(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" for no error
	}{
		{"default", Config{}, ""},
		{"three", Config{Replicas: 3}, ""},
		{"beyond JetStream's five", Config{Replicas: 7}, "between 1 and 5"},
		{"negative", Config{Replicas: -1}, "between 1 and 5"},
		{"three on the embedded server", Config{Replicas: 3, Embedded: &bus.EmbeddedConfig{}}, "single node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.WithDefaults().checkReplicas()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("checkReplicas = %v, want %q", err, tc.want)
			}
		})
	}
	cfg := Config{Replicas: 3}.WithDefaults()
	if got := cfg.Loop.Cluster.Streams.Replicas; got != 3 {
		t.Fatalf("stream replicas default = %d, want the buckets' 3", got)
	}
	cfg.Loop.Cluster.Streams.Replicas = 1
	if got := cfg.WithDefaults().Loop.Cluster.Streams.Replicas; got != 1 {
		t.Fatalf("stream replicas set apart = %d, want 1", got)
	}
}
