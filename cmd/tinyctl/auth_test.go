package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
)

func TestTokenAuthByFlagEnvAndNATSContext(t *testing.T) {
	t.Parallel()
	u := newUser(t, natstest.WithToken())
	token := u.nats.Credentials().Token

	expect(t, u.run("list", "--nats-token", token), 0, nil, []string{"No components found"})
	expect(t, u.runIn("", []string{"TINYCTL_NATS_TOKEN=" + token}, "list"), 0, nil, []string{"No components found"})
	expect(t, u.run("list", "--nats-token", "wrong"), 1, nil, []string{"Error: bus: connect to " + u.nats.URL() + ": ", "authentication failed"})

	// The nats CLI's selected context supplies URL and token; a flag wins
	// over the context's value.
	dir := filepath.Join(u.home, ".config", "nats")
	if err := os.MkdirAll(filepath.Join(dir, "context"), 0o700); err != nil {
		t.Fatal(err)
	}
	ctxJSON := `{"description": "test", "url": "` + u.nats.URL() + `", "token": "` + token + `"}`
	if err := os.WriteFile(filepath.Join(dir, "context", "dev.json"), []byte(ctxJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "context.txt"), []byte("dev\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noURL := &user{t: t, nats: u.nats, home: u.home}
	expect(t, noURL.run("list"), 0, nil, []string{"No components found"})
	expect(t, noURL.run("list", "--nats-token", "wrong"), 1, nil, []string{"authentication failed"})
	expect(t, noURL.run("list", "--nats-context", "nope"), 1, nil, []string{`Error: nats context "nope": `})
}

func TestEveryNATSAuthModeByFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opts  []natstest.Option
		flags func(natstest.Credentials) []string
	}{
		{"user and password", []natstest.Option{natstest.WithUserPassword()}, func(c natstest.Credentials) []string {
			return []string{"--nats-user", c.User, "--nats-password", c.Password}
		}},
		{"nkey seed", []natstest.Option{natstest.WithNKey()}, func(c natstest.Credentials) []string {
			return []string{"--nats-nkey", c.NKeySeedFile}
		}},
		{"creds file", []natstest.Option{natstest.WithJWT()}, func(c natstest.Credentials) []string {
			return []string{"--nats-creds", c.CredsFile}
		}},
		{"mutual TLS", []natstest.Option{natstest.WithMutualTLS()}, func(c natstest.Credentials) []string {
			return []string{"--nats-ca", c.TLS.CA, "--nats-cert", c.TLS.ClientCert, "--nats-key", c.TLS.ClientKey}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := newUser(t, tt.opts...)
			f := u.file("c.yaml", component("media", "resizer", "acme/resizer:1.0.0"))
			args := append([]string{"apply", "-f", f}, tt.flags(u.nats.Credentials())...)
			expect(t, u.run(args...), 0, []string{"component/media.resizer created (revision 1)"}, nil)
		})
	}
}

func TestConflictingCredentialFlags(t *testing.T) {
	t.Parallel()
	u := newUser(t)
	expect(t, u.run("list", "--nats-token", "a", "--nats-creds", "b"), 1, nil,
		[]string{"Error: use only one of --nats-token, --nats-user/--nats-password, --nats-nkey and --nats-creds\n"})
}
