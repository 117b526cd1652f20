package cli

import (
	"errors"
	"strings"
	"time"

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

	fs *pflag.FlagSet
}

// natsFlag describes one string flag of NATSFlags.
type natsFlag struct {
	name, env, usage string
	value            *string
	def              string
}

func (f *NATSFlags) stringFlags() []natsFlag {
	return []natsFlag{
		{"nats-url", "TINYCTL_NATS_URL", "NATS server URLs, comma-separated", &f.URL, DefaultNATSURL},
		{"nats-token", "TINYCTL_NATS_TOKEN", "NATS authentication token", &f.Token, ""},
		{"nats-user", "TINYCTL_NATS_USER", "NATS user name (with --nats-password)", &f.User, ""},
		{"nats-password", "TINYCTL_NATS_PASSWORD", "NATS password", &f.Password, ""},
		{"nats-nkey", "TINYCTL_NATS_NKEY", "file holding an nkey user seed", &f.NKey, ""},
		{"nats-creds", "TINYCTL_NATS_CREDS", "NATS credentials file (user JWT and seed)", &f.Creds, ""},
		{"nats-ca", "TINYCTL_NATS_CA", "PEM file of the CAs that sign the NATS server certificate", &f.CA, ""},
		{"nats-cert", "TINYCTL_NATS_CERT", "client certificate for mutual TLS (with --nats-key)", &f.Cert, ""},
		{"nats-key", "TINYCTL_NATS_KEY", "private key of --nats-cert", &f.Key, ""},
		{"nats-context", "TINYCTL_NATS_CONTEXT", "nats CLI context to read connection settings from (default: the selected one; \"\" for none)", &f.Context, ""},
		{"bucket", "TINYCTL_BUCKET", "JetStream KV bucket holding the component specs", &f.Bucket, specs.DefaultBucket},
	}
}

// AddFlags registers the NATS flags and --request-timeout on fs, each bound
// to its TINYCTL_* environment variable.
func (f *NATSFlags) AddFlags(fs *pflag.FlagSet) {
	f.fs = fs
	for _, nf := range f.stringFlags() {
		fs.StringVar(nf.value, nf.name, nf.def, nf.usage)
		BindEnv(fs, nf.name, nf.env)
	}
	fs.DurationVar(&f.RequestTimeout, "request-timeout", DefaultRequestTimeout,
		"how long to wait for NATS and the Kubernetes API server; 0 waits forever")
	BindEnv(fs, "request-timeout", "TINYCTL_REQUEST_TIMEOUT")
}

// explicit reports whether the flag was given on the command line or by
// its environment variable.
func (f *NATSFlags) explicit(name string) bool { return f.fs != nil && f.fs.Changed(name) }

// Config resolves the connection settings. A setting given by flag or
// environment variable wins; otherwise the NATS context's value is used
// (the one named by --nats-context, else the one `nats context select`
// chose), otherwise the flag's default. Credentials are taken as a group:
// any credential flag replaces all of the context's credentials. It
// returns warnings about context settings tinyctl ignores, and an error
// when the context cannot be read.
func (f *NATSFlags) Config(getenv func(string) string) (bus.Config, []string, error) {
	ctx, warnings, err := f.natsContext(getenv)
	if err != nil {
		return bus.Config{}, nil, err
	}
	pick := func(name, flag, fromCtx string) string {
		if f.explicit(name) || fromCtx == "" {
			return flag
		}
		return fromCtx
	}
	cfg := bus.Config{
		URLs:        splitURLs(pick("nats-url", f.URL, ctx.URL)),
		Name:        "tinyctl",
		TLSCAFile:   pick("nats-ca", f.CA, ctx.CA),
		TLSCertFile: pick("nats-cert", f.Cert, ctx.Cert),
		TLSKeyFile:  pick("nats-key", f.Key, ctx.Key),
	}
	if f.anyCredentialFlag() || !ctx.hasAuth() {
		cfg.Token, cfg.User, cfg.Password, cfg.NKeySeedFile, cfg.CredsFile = f.Token, f.User, f.Password, f.NKey, f.Creds
	} else {
		cfg.Token, cfg.User, cfg.Password, cfg.NKeySeedFile, cfg.CredsFile = ctx.Token, ctx.User, ctx.Password, ctx.NKey, ctx.Creds
	}
	if err := checkCredentials(cfg); err != nil {
		return bus.Config{}, nil, err
	}
	return cfg, warnings, nil
}

// natsContext loads the context in force, or the zero context when none is.
func (f *NATSFlags) natsContext(getenv func(string) string) (NATSContext, []string, error) {
	name := f.Context
	if !f.explicit("nats-context") {
		selected, err := SelectedNATSContext(getenv)
		if err != nil {
			return NATSContext{}, nil, err
		}
		name = selected
	}
	if name == "" {
		return NATSContext{}, nil, nil
	}
	return LoadNATSContext(name, getenv)
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
// the words of the flags.
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
