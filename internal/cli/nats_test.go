package cli_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/internal/testkit/natstest"
)

// environ is a fake environment.
type environ map[string]string

func (e environ) get(k string) string { return e[k] }

// parse registers the NATS flags, parses args and applies env, as a
// command does.
func parse(t *testing.T, env environ, args ...string) *cli.NATSFlags {
	t.Helper()
	var f cli.NATSFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := cli.ApplyEnv(fs, env.get); err != nil {
		t.Fatal(err)
	}
	return &f
}

// natsHome writes a nats CLI config dir with the given contexts and
// selection, and returns the HOME to use.
func natsHome(t *testing.T, selected string, contexts map[string]string) string {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "nats")
	if err := os.MkdirAll(filepath.Join(dir, "context"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range contexts {
		if err := os.WriteFile(filepath.Join(dir, "context", name+".json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if selected != "" {
		if err := os.WriteFile(filepath.Join(dir, "context.txt"), []byte(selected+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestNATSConfigFromFlagsAndEnv(t *testing.T) {
	empty := environ{"HOME": t.TempDir()}
	tests := []struct {
		name string
		env  environ
		args []string
		want bus.Config
	}{
		{"defaults", empty, nil, bus.Config{URLs: []string{cli.DefaultNATSURL}}},
		{"flags", empty, []string{"--nats-url", "nats://a:1,nats://b:2", "--nats-token", "t", "--nats-ca", "/ca.pem"},
			bus.Config{URLs: []string{"nats://a:1", "nats://b:2"}, Token: "t", TLSCAFile: "/ca.pem"}},
		{"env", environ{"HOME": empty["HOME"], "TINYCTL_NATS_USER": "u", "TINYCTL_NATS_PASSWORD": "p"}, nil,
			bus.Config{URLs: []string{cli.DefaultNATSURL}, User: "u", Password: "p"}},
		{"a flag beats env", environ{"HOME": empty["HOME"], "TINYCTL_NATS_URL": "nats://env:1"}, []string{"--nats-url", "nats://flag:1"},
			bus.Config{URLs: []string{"nats://flag:1"}}},
		{"the nats CLI's NATS_URL", environ{"HOME": empty["HOME"], "NATS_URL": "nats://natscli:1"}, nil,
			bus.Config{URLs: []string{"nats://natscli:1"}}},
		{"TINYCTL_NATS_URL beats NATS_URL", environ{"HOME": empty["HOME"], "NATS_URL": "nats://natscli:1", "TINYCTL_NATS_URL": "nats://env:1"}, nil,
			bus.Config{URLs: []string{"nats://env:1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, tt.env, tt.args...).Config(tt.env.get)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Name = "tinyctl"
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNATSContextsAreReadByTheNATSLibrary connects to a real server with
// what each context resolves to: the settings the nats CLI's library
// reads apply, flags win over them, credentials as a group.
func TestNATSContextsAreReadByTheNATSLibrary(t *testing.T) {
	srv := natstest.Start(t, natstest.WithToken())
	token := srv.Credentials().Token
	home := natsHome(t, "good", map[string]string{
		"good":   `{"url": "` + srv.URL() + `", "token": "` + token + `", "jetstream_domain": "hub"}`,
		"stale":  `{"url": "` + srv.URL() + `", "token": "not-the-token"}`,
		"broken": `{"url": `,
	})
	env := environ{"HOME": home}
	connects := func(t *testing.T, cfg bus.Config) error {
		t.Helper()
		cfg.Reconnect.Cap = 50 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := bus.Connect(ctx, cfg, nil)
		if err == nil {
			c.Close()
		}
		return err
	}
	tests := []struct {
		name     string
		env      environ
		args     []string
		wantAuth bool // connecting is refused for the credentials
		domain   string
	}{
		{"the selected context", env, nil, false, "hub"},
		{"a context named by env", environ{"HOME": home, "TINYCTL_NATS_CONTEXT": "stale"}, nil, true, ""},
		{"a credential flag replaces the context's", env, []string{"--nats-token", "wrong"}, true, "hub"},
		{"a credential flag fixes a stale context", env, []string{"--nats-context", "stale", "--nats-token", token}, false, ""},
		{"XDG_CONFIG_HOME moves the directory", environ{"HOME": "/nonexistent", "XDG_CONFIG_HOME": filepath.Join(home, ".config")}, nil, false, "hub"},
		{"a context file by path", environ{"HOME": t.TempDir()}, []string{"--nats-context", filepath.Join(home, ".config", "nats", "context", "good.json")}, false, "hub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parse(t, tt.env, tt.args...).Config(tt.env.get)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.JetStreamDomain != tt.domain {
				t.Errorf("JetStream domain %q, want %q", cfg.JetStreamDomain, tt.domain)
			}
			err = connects(t, cfg)
			if tt.wantAuth != errors.Is(err, bus.ErrAuthentication) || (!tt.wantAuth && err != nil) {
				t.Fatalf("connect: %v (want refused credentials: %v)", err, tt.wantAuth)
			}
		})
	}
	if cfg, err := parse(t, env, "--nats-context=").Config(env.get); err != nil || cfg.URLs[0] != cli.DefaultNATSURL || len(cfg.Options) != 0 {
		t.Errorf("an empty --nats-context must ignore the selected one: %+v %v", cfg, err)
	}
	f := parse(t, env)
	f.NoContexts = true // serve's
	if cfg, err := f.Config(env.get); err != nil || cfg.URLs[0] != cli.DefaultNATSURL || len(cfg.Options) != 0 || cfg.JetStreamDomain != "" {
		t.Errorf("NoContexts must read no context, not even the selected one: %+v %v", cfg, err)
	}
}

func TestNATSConfigErrors(t *testing.T) {
	home := natsHome(t, "", map[string]string{"broken": `{"url": `})
	env := environ{"HOME": home}
	errs := []struct {
		args []string
		want string
	}{
		{[]string{"--nats-context", "missing"}, `nats context "missing": `},
		{[]string{"--nats-context", "broken"}, `nats context "broken": `},
		{[]string{"--nats-context", "../x"}, `nats context "../x": `},
		{[]string{"--nats-token", "a", "--nats-nkey", "b"}, "use only one of --nats-token, --nats-user/--nats-password, --nats-nkey and --nats-creds"},
		{[]string{"--nats-user", "a"}, "--nats-user and --nats-password go together"},
		{[]string{"--nats-cert", "a"}, "--nats-cert and --nats-key go together"},
	}
	for _, tt := range errs {
		_, err := parse(t, env, tt.args...).Config(env.get)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want it to start %q", tt.args, err, tt.want)
		}
	}
}

func TestApplyEnvNamesABadVariable(t *testing.T) {
	var f cli.NATSFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.AddFlags(fs)
	err := cli.ApplyEnv(fs, environ{"TINYCTL_REQUEST_TIMEOUT": "soon"}.get)
	if err == nil || !strings.HasPrefix(err.Error(), `environment variable TINYCTL_REQUEST_TIMEOUT="soon": invalid argument`) {
		t.Errorf("err = %v", err)
	}
	if u := fs.Lookup("nats-url").Usage; !strings.HasSuffix(u, "[$TINYCTL_NATS_URL, $NATS_URL]") {
		t.Errorf("help text %q does not name the variable", u)
	}
}
