package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// NATSContext is the part of a `nats` CLI context file that tinyctl
// honours. Paths may start with "~/".
type NATSContext struct {
	// Name is the context's name, or the path it was read from.
	Name     string `json:"-"`
	URL      string `json:"url"`
	Token    string `json:"token"`
	User     string `json:"user"`
	Password string `json:"password"`
	Creds    string `json:"creds"`
	NKey     string `json:"nkey"`
	Cert     string `json:"cert"`
	Key      string `json:"key"`
	CA       string `json:"ca"`

	// Settings tinyctl cannot apply; LoadNATSContext warns about them.
	NSC             string `json:"nsc"`
	UserJWT         string `json:"user_jwt"`
	JetStreamDomain string `json:"jetstream_domain"`
	JetStreamPrefix string `json:"jetstream_api_prefix"`
	InboxPrefix     string `json:"inbox_prefix"`
	TLSFirst        bool   `json:"tls_first"`
}

// natsConfigDir is where the nats CLI keeps its contexts:
// $XDG_CONFIG_HOME/nats, else $HOME/.config/nats.
func natsConfigDir(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "nats")
	}
	return filepath.Join(getenv("HOME"), ".config", "nats")
}

// SelectedNATSContext returns the name of the context selected with
// `nats context select` (the content of context.txt), or "" when none is.
func SelectedNATSContext(getenv func(string) string) (string, error) {
	b, err := os.ReadFile(filepath.Join(natsConfigDir(getenv), "context.txt"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read selected nats context: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// LoadNATSContext reads the context called name from the nats CLI's
// context directory, or from the file name when it is a path ending in
// ".json". It returns the context and a warning for each setting it
// cannot apply, or an error when the file is missing or not valid JSON.
func LoadNATSContext(name string, getenv func(string) string) (NATSContext, []string, error) {
	path := name
	isPath := strings.HasSuffix(name, ".json") && strings.ContainsRune(name, filepath.Separator)
	if !isPath {
		if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			return NATSContext{}, nil, fmt.Errorf("nats context %q: a name may not contain a path separator", name)
		}
		path = filepath.Join(natsConfigDir(getenv), "context", name+".json")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return NATSContext{}, nil, fmt.Errorf("nats context %q: %w", name, err)
	}
	var c NATSContext
	if err := json.Unmarshal(b, &c); err != nil {
		return NATSContext{}, nil, fmt.Errorf("nats context %q: %s: %w", name, path, err)
	}
	c.Name = name
	home := getenv("HOME")
	for _, p := range []*string{&c.Creds, &c.NKey, &c.Cert, &c.Key, &c.CA} {
		*p = expandHome(*p, home)
	}
	return c, c.unsupported(), nil
}

// unsupported lists warnings for settings tinyctl ignores.
func (c NATSContext) unsupported() []string {
	var out []string
	for _, s := range []struct {
		key string
		set bool
	}{
		{"nsc", c.NSC != ""}, {"user_jwt", c.UserJWT != ""}, {"jetstream_domain", c.JetStreamDomain != ""},
		{"jetstream_api_prefix", c.JetStreamPrefix != ""}, {"inbox_prefix", c.InboxPrefix != ""}, {"tls_first", c.TLSFirst},
	} {
		if s.set {
			out = append(out, fmt.Sprintf("nats context %q: %s is not supported by tinyctl and is ignored", c.Name, s.key))
		}
	}
	return out
}

// hasAuth reports whether the context names any credential.
func (c NATSContext) hasAuth() bool {
	return c.Token != "" || c.User != "" || c.Password != "" || c.Creds != "" || c.NKey != ""
}

func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}
