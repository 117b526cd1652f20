package provision

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// TestTokensSurviveTheNATSConfig checks generated tokens reach nats-server
// unchanged through the chart's `token: $NATS_TOKEN`, which nats-server
// parses as a bare value (a token that looked like a number or a boolean
// would not survive).
func TestTokensSurviveTheNATSConfig(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("authorization {\n  token: $NATS_TOKEN\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 50 {
		tok := newToken()
		if seen[tok] {
			t.Fatalf("token %q generated twice", tok)
		}
		seen[tok] = true
		t.Setenv("NATS_TOKEN", tok)
		opts, err := server.ProcessConfigFile(conf)
		if err != nil {
			t.Fatalf("token %q: %v", tok, err)
		}
		if opts.Authorization != tok {
			t.Fatalf("token %q reached nats-server as %q", tok, opts.Authorization)
		}
	}
}
