package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/internal/cli"
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

func TestNATSConfigPrecedence(t *testing.T) {
	home := natsHome(t, "prod", map[string]string{
		"prod": `{"url": "nats://prod:4222", "creds": "~/prod.creds", "ca": "/etc/prod-ca.pem"}`,
		"dev":  `{"url": "nats://dev:4222", "token": "dev-token"}`,
	})
	tests := []struct {
		name string
		env  environ
		args []string
		want bus.Config
	}{
		{"defaults without a context", environ{"HOME": t.TempDir()}, nil,
			bus.Config{URLs: []string{cli.DefaultNATSURL}}},
		{"the selected context", environ{"HOME": home}, nil,
			bus.Config{URLs: []string{"nats://prod:4222"}, CredsFile: filepath.Join(home, "prod.creds"), TLSCAFile: "/etc/prod-ca.pem"}},
		{"a context named by flag", environ{"HOME": home}, []string{"--nats-context", "dev"},
			bus.Config{URLs: []string{"nats://dev:4222"}, Token: "dev-token"}},
		{"a context named by env", environ{"HOME": home, "TINYCTL_NATS_CONTEXT": "dev"}, nil,
			bus.Config{URLs: []string{"nats://dev:4222"}, Token: "dev-token"}},
		{"an empty --nats-context ignores the selected one", environ{"HOME": home}, []string{"--nats-context="},
			bus.Config{URLs: []string{cli.DefaultNATSURL}}},
		{"flags beat the context, credentials as a group", environ{"HOME": home}, []string{"--nats-url", "nats://a:1,nats://b:2", "--nats-token", "t"},
			bus.Config{URLs: []string{"nats://a:1", "nats://b:2"}, Token: "t", TLSCAFile: "/etc/prod-ca.pem"}},
		{"env beats the context", environ{"HOME": home, "TINYCTL_NATS_USER": "u", "TINYCTL_NATS_PASSWORD": "p", "TINYCTL_NATS_CA": "/ca.pem"}, nil,
			bus.Config{URLs: []string{"nats://prod:4222"}, User: "u", Password: "p", TLSCAFile: "/ca.pem"}},
		{"a flag beats env", environ{"HOME": home, "TINYCTL_NATS_URL": "nats://env:1"}, []string{"--nats-url", "nats://flag:1"},
			bus.Config{URLs: []string{"nats://flag:1"}, CredsFile: filepath.Join(home, "prod.creds"), TLSCAFile: "/etc/prod-ca.pem"}},
		{"XDG_CONFIG_HOME moves the context directory", environ{"HOME": "/home/x", "XDG_CONFIG_HOME": filepath.Join(home, ".config")}, nil,
			bus.Config{URLs: []string{"nats://prod:4222"}, CredsFile: "/home/x/prod.creds", TLSCAFile: "/etc/prod-ca.pem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := parse(t, tt.env, tt.args...).Config(tt.env.get)
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

func TestNATSConfigErrorsAndWarnings(t *testing.T) {
	home := natsHome(t, "", map[string]string{
		"odd":    `{"url": "nats://x:1", "nsc": "nsc://op", "tls_first": true}`,
		"broken": `{"url": `,
	})
	env := environ{"HOME": home}
	_, warnings, err := parse(t, env, "--nats-context", "odd").Config(env.get)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`nats context "odd": nsc is not supported by tinyctl and is ignored`,
		`nats context "odd": tls_first is not supported by tinyctl and is ignored`,
	}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	errs := []struct {
		args []string
		want string
	}{
		{[]string{"--nats-context", "missing"}, `nats context "missing": open ` + filepath.Join(home, ".config/nats/context/missing.json") + ": no such file or directory"},
		{[]string{"--nats-context", "broken"}, `nats context "broken": ` + filepath.Join(home, ".config/nats/context/broken.json") + ": unexpected end of JSON input"},
		{[]string{"--nats-context", "../x"}, `nats context "../x": a name may not contain a path separator`},
		{[]string{"--nats-token", "a", "--nats-nkey", "b"}, "use only one of --nats-token, --nats-user/--nats-password, --nats-nkey and --nats-creds"},
		{[]string{"--nats-user", "a"}, "--nats-user and --nats-password go together"},
		{[]string{"--nats-cert", "a"}, "--nats-cert and --nats-key go together"},
	}
	for _, tt := range errs {
		_, _, err := parse(t, env, tt.args...).Config(env.get)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.want)
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
	if u := fs.Lookup("nats-url").Usage; !strings.HasSuffix(u, "[$TINYCTL_NATS_URL]") {
		t.Errorf("help text %q does not name the variable", u)
	}
}
