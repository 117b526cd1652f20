package deploy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"sigs.k8s.io/yaml"
)

// natsConf renders the nats chart and returns its server configuration.
func natsConf(t *testing.T, values map[string]any) string {
	t.Helper()
	out, err := render(t, "nats", values)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(out["nats/templates/configmap.yaml"]), &cm); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(cm.Data["nats.conf"]), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNATSConfigAccepted loads the chart's configuration into nats-server
// with the environment the pod gives it, checks the settings the runtime
// relies on, then runs the server: a client with the token gets in, one
// without is refused.
func TestNATSConfigAccepted(t *testing.T) {
	const token = "tkEXAMPLE234567TOKEN"
	t.Setenv("SERVER_NAME", "nats-0")
	t.Setenv("NATS_TOKEN", token)
	opts, err := server.ProcessConfigFile(natsConf(t, nil))
	if err != nil {
		t.Fatalf("nats-server rejects the chart's config: %v", err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"server name", opts.ServerName, "nats-0"},
		{"client port", opts.Port, 4222},
		{"monitoring port", opts.HTTPPort, 8222},
		{"leafnode port (closed but in a hub)", opts.LeafNode.Port, 0},
		{"jetstream", opts.JetStream, true},
		{"store dir", opts.StoreDir, "/data"},
		{"token", opts.Authorization, token},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}

	opts.Port, opts.HTTPPort, opts.LeafNode.Port = -1, -1, -1
	opts.StoreDir = t.TempDir()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(30 * time.Second) { // a loaded 2-core machine
		t.Fatal("server not ready")
	}
	nc, err := nats.Connect(s.ClientURL(), nats.Token(token))
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	nc.Close()
	if nc, err := nats.Connect(s.ClientURL()); err == nil {
		nc.Close()
		t.Fatal("connect without the token succeeded")
	}
}

// TestNATSConfigWithoutAuth checks auth.mode none drops the token.
func TestNATSConfigWithoutAuth(t *testing.T) {
	t.Setenv("SERVER_NAME", "nats-0")
	opts, err := server.ProcessConfigFile(natsConf(t, map[string]any{"auth": map[string]any{"mode": "none"}}))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Authorization != "" {
		t.Errorf("token = %q, want none", opts.Authorization)
	}
}

// TestNATSConfigFleetMember checks that fleet values make the server a
// leafnode of the hub in its own JetStream domain, with the status and
// heartbeat subjects kept local.
func TestNATSConfigFleetMember(t *testing.T) {
	t.Setenv("SERVER_NAME", "nats-0")
	opts, err := server.ProcessConfigFile(natsConf(t, map[string]any{
		"auth":      map[string]any{"mode": "none"},
		"jetstream": map[string]any{"domain": "eu-1"},
		"fleet":     map[string]any{"hubURLs": []any{"nats-leaf://hub.example.com:7422"}, "hubCredentialsSecret": "hub-creds"},
	}))
	if err != nil {
		t.Fatalf("nats-server rejects the fleet member's config: %v", err)
	}
	if opts.JetStreamDomain != "eu-1" {
		t.Errorf("domain %q, want eu-1", opts.JetStreamDomain)
	}
	if len(opts.LeafNode.Remotes) != 1 {
		t.Fatalf("remotes: %+v", opts.LeafNode.Remotes)
	}
	r := opts.LeafNode.Remotes[0]
	if len(r.URLs) != 1 || r.URLs[0].Host != "hub.example.com:7422" || r.Credentials != "/etc/nats-hub/hub.creds" {
		t.Errorf("remote: urls %v, credentials %q", r.URLs, r.Credentials)
	}
	if want := []string{"$KV.tinyctl-status.>", "$KV.tinyctl-heartbeats.>"}; !slices.Equal(r.DenyExports, want) {
		t.Errorf("deny_exports %v, want %v", r.DenyExports, want)
	}
	if opts.LeafNode.Port != 0 {
		t.Errorf("a member listens for leafnodes on %d, want closed", opts.LeafNode.Port)
	}
	plain, err := server.ProcessConfigFile(natsConf(t, map[string]any{"auth": map[string]any{"mode": "none"}}))
	testMust(t, err)
	if len(plain.LeafNode.Remotes) != 0 || plain.JetStreamDomain != "" {
		t.Errorf("default chart: remotes %v, domain %q", plain.LeafNode.Remotes, plain.JetStreamDomain)
	}
}

func testMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestNATSConfigFleetHub: fleet.acceptLeafnodes opens the leafnode port
// (install --accept-leafnodes), on the pod and both Services; a broker
// that is both hub and member is refused.
func TestNATSConfigFleetHub(t *testing.T) {
	t.Setenv("SERVER_NAME", "nats-0")
	hub := map[string]any{"auth": map[string]any{"mode": "none"}, "fleet": map[string]any{"acceptLeafnodes": true}}
	opts, err := server.ProcessConfigFile(natsConf(t, hub))
	testMust(t, err)
	if opts.LeafNode.Port != 7422 || !opts.LeafNode.NoAdvertise {
		t.Errorf("hub: leafnode port %d, no_advertise %t, want 7422, true", opts.LeafNode.Port, opts.LeafNode.NoAdvertise)
	}
	out, err := render(t, "nats", hub)
	testMust(t, err)
	closed, err := render(t, "nats", nil)
	testMust(t, err)
	for _, file := range []string{"nats/templates/statefulset.yaml", "nats/templates/service.yaml"} {
		if !strings.Contains(out[file], "7422") {
			t.Errorf("hub: %s does not expose 7422", file)
		}
		if strings.Contains(closed[file], "7422") {
			t.Errorf("default: %s exposes 7422", file)
		}
	}
	if _, err := render(t, "nats", map[string]any{"fleet": map[string]any{"acceptLeafnodes": true, "hubURLs": []any{"nats-leaf://hub:7422"}}}); err == nil ||
		!strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("hub and member at once: %v, want refused", err)
	}
}

// TestNATSConfigMaxPayload: maxPayload reaches the server (it bounds the
// control account's JWT in jwt mode); unset, the server keeps its 1 MB.
func TestNATSConfigMaxPayload(t *testing.T) {
	t.Setenv("SERVER_NAME", "nats-0")
	for _, c := range []struct {
		value string
		want  int32
	}{{"", 0}, {"8MB", 8 << 20}} {
		opts, err := server.ProcessConfigFile(natsConf(t, map[string]any{"auth": map[string]any{"mode": "none"}, "maxPayload": c.value}))
		testMust(t, err)
		if opts.MaxPayload != c.want {
			t.Errorf("maxPayload %q: server max_payload %d, want %d", c.value, opts.MaxPayload, c.want)
		}
	}
}
