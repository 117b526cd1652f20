package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/jsm.go/natscontext"
	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/specs"
)

// Defaults of the shared connection flags.
const (
	DefaultNATSURL        = "nats://127.0.0.1:4222"
	DefaultRequestTimeout = 30 * time.Second
)

// NATSFlags are the flags that say where NATS is, who to be there and
// which bucket holds the specs. Register them with AddFlags, then call
// Config after the command line (and ApplyEnv) has been parsed.
type NATSFlags struct {
	URL      string
	Token    string
	User     string
	Password string
	NKey     string
	Creds    string
	CA       string
	Cert     string
	Key      string
	Context  string
	Bucket   string
	// RequestTimeout bounds how long a command waits for NATS or the
	// Kubernetes API server; 0 waits forever.
	RequestTimeout time.Duration
	// NoContexts makes Config read no nats CLI context, not even the
	// selected one: a controller takes its connection from its flags and
	// environment only.
	NoContexts bool

	fs *pflag.FlagSet
}

// natsFlag describes one string flag of NATSFlags.
type natsFlag struct {
	name, env, usage string
	value            *string
	def              string
	// natsEnv is the nats CLI's variable for the same setting, read when
	// env is not set.
	natsEnv string
}

func (f *NATSFlags) stringFlags() []natsFlag {
	return []natsFlag{
		{"nats-url", "TINYCTL_NATS_URL", "NATS server URLs, comma-separated", &f.URL, DefaultNATSURL, "NATS_URL"},
		{"nats-token", "TINYCTL_NATS_TOKEN", "NATS authentication token", &f.Token, "", ""},
		{"nats-user", "TINYCTL_NATS_USER", "NATS user name (with --nats-password)", &f.User, "", ""},
		{"nats-password", "TINYCTL_NATS_PASSWORD", "NATS password", &f.Password, "", ""},
		{"nats-nkey", "TINYCTL_NATS_NKEY", "file holding an nkey user seed", &f.NKey, "", ""},
		{"nats-creds", "TINYCTL_NATS_CREDS", "NATS credentials file (user JWT and seed)", &f.Creds, "", ""},
		{"nats-ca", "TINYCTL_NATS_CA", "PEM file of the CAs that sign the NATS server certificate", &f.CA, "", ""},
		{"nats-cert", "TINYCTL_NATS_CERT", "client certificate for mutual TLS (with --nats-key)", &f.Cert, "", ""},
		{"nats-key", "TINYCTL_NATS_KEY", "private key of --nats-cert", &f.Key, "", ""},
		{"nats-context", "TINYCTL_NATS_CONTEXT", "nats CLI context to read connection settings from (default: the selected one; \"\" for none)", &f.Context, "", "NATS_CONTEXT"},
		{"bucket", "TINYCTL_BUCKET", "JetStream KV bucket holding the component specs", &f.Bucket, specs.DefaultBucket, ""},
	}
}

// AddFlags registers the NATS flags and --request-timeout on fs, each bound
// to its TINYCTL_* environment variable.
func (f *NATSFlags) AddFlags(fs *pflag.FlagSet) {
	f.fs = fs
	for _, nf := range f.stringFlags() {
		fs.StringVar(nf.value, nf.name, nf.def, nf.usage)
		if nf.natsEnv != "" {
			BindEnv(fs, nf.name, nf.env, nf.natsEnv)
		} else {
			BindEnv(fs, nf.name, nf.env)
		}
	}
	fs.DurationVar(&f.RequestTimeout, "request-timeout", DefaultRequestTimeout,
		"how long to wait for NATS and the Kubernetes API server; 0 waits forever")
	BindEnv(fs, "request-timeout", "TINYCTL_REQUEST_TIMEOUT")
}

// explicit reports whether the flag was given on the command line or by
// its environment variable.
func (f *NATSFlags) explicit(name string) bool { return f.fs != nil && f.fs.Changed(name) }

// Config resolves the connection settings. A setting given by flag or
// environment variable wins; otherwise the nats CLI context's value is
// used (the one named by --nats-context, else the one `nats context
// select` chose), otherwise the flag's default. Contexts are read by the
// nats CLI's own library, so every setting it knows applies (nsc and
// user-JWT credentials, JetStream domain, inbox prefix, TLS first, ...).
// Credentials are taken as a group: any credential flag replaces all of
// the context's. It fails when the context cannot be read or the flags
// cannot work together.
func (f *NATSFlags) Config(getenv func(string) string) (bus.Config, error) {
	flags := f.credentials(bus.Config{Name: "tinyctl", URLs: splitURLs(f.URL),
		TLSCAFile: f.CA, TLSCertFile: f.Cert, TLSKeyFile: f.Key})
	if err := checkCredentials(flags); err != nil {
		return bus.Config{}, err
	}
	nctx, err := f.natsContext(getenv)
	if err != nil || nctx == nil {
		return flags, err
	}
	cfg := bus.Config{Name: "tinyctl", URLs: splitURLs(nctx.ServerURL()), JetStreamDomain: nctx.JSDomain()}
	if cfg.Options, err = nctx.NATSOptions(); err != nil {
		return bus.Config{}, fmt.Errorf("nats context %q: %w", nctx.Name, err)
	}
	return cfg, nil
}

// natsContext loads the context in force with the explicit flags laid on
// top, or nil when no context is in force.
func (f *NATSFlags) natsContext(getenv func(string) string) (*natscontext.Context, error) {
	if f.NoContexts {
		return nil, nil
	}
	name := f.Context
	reg := natscontext.NewRegistry(natscontext.NewFileBackendAt(configRoot(getenv)))
	if !f.explicit("nats-context") {
		selected, err := reg.Selected(context.Background())
		if err != nil && !errors.Is(err, natscontext.ErrNoneSelected) {
			return nil, fmt.Errorf("selected nats context: %w", err)
		}
		name = selected
	}
	if name == "" {
		return nil, nil
	}
	var nctx *natscontext.Context
	var err error
	if strings.HasSuffix(name, ".json") && strings.ContainsRune(name, filepath.Separator) {
		nctx, err = natscontext.NewFromFile(name, f.overrides()...)
	} else {
		nctx, err = reg.Load(context.Background(), name, f.overrides()...)
	}
	if err != nil {
		return nil, fmt.Errorf("nats context %q: %w", name, err)
	}
	nctx.Name = name
	return nctx, nil
}

// configRoot is where the nats CLI keeps its configuration:
// $XDG_CONFIG_HOME, else $HOME/.config.
func configRoot(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	return filepath.Join(getenv("HOME"), ".config")
}

// overrides are the explicit flags as context settings.
func (f *NATSFlags) overrides() []natscontext.Option {
	var out []natscontext.Option
	if f.explicit("nats-url") {
		out = append(out, natscontext.WithServerURL(f.URL))
	}
	for _, o := range []struct {
		flag  string
		value string
		with  func(string) natscontext.Option
	}{{"nats-ca", f.CA, natscontext.WithCA}, {"nats-cert", f.Cert, natscontext.WithCertificate}, {"nats-key", f.Key, natscontext.WithKey}} {
		if f.explicit(o.flag) {
			out = append(out, o.with(o.value))
		}
	}
	if f.anyCredentialFlag() {
		out = append(out, natscontext.WithToken(f.Token), natscontext.WithUser(f.User), natscontext.WithPassword(f.Password),
			natscontext.WithCreds(f.Creds), natscontext.WithNKey(f.NKey), natscontext.WithUserJWT(""), natscontext.WithUserSeed(""))
	}
	return out
}

// credentials returns cfg with the credential flags set.
func (f *NATSFlags) credentials(cfg bus.Config) bus.Config {
	cfg.Token, cfg.User, cfg.Password, cfg.NKeySeedFile, cfg.CredsFile = f.Token, f.User, f.Password, f.NKey, f.Creds
	return cfg
}

func (f *NATSFlags) anyCredentialFlag() bool {
	for _, name := range []string{"nats-token", "nats-user", "nats-password", "nats-nkey", "nats-creds"} {
		if f.explicit(name) {
			return true
		}
	}
	return false
}

// checkCredentials refuses combinations the server could never accept, in
// the words of the flags. bus.Config checks the same for library callers
// (bus/connect.go), in its field names; a natscontext built from the flags
// would not refuse them but silently pick one credential.
func checkCredentials(cfg bus.Config) error {
	n := 0
	for _, set := range []bool{cfg.Token != "", cfg.User != "" || cfg.Password != "", cfg.NKeySeedFile != "", cfg.CredsFile != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return errors.New("use only one of --nats-token, --nats-user/--nats-password, --nats-nkey and --nats-creds")
	case (cfg.User == "") != (cfg.Password == ""):
		return errors.New("--nats-user and --nats-password go together")
	case (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == ""):
		return errors.New("--nats-cert and --nats-key go together")
	}
	return nil
}

func splitURLs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
