package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// envAnnotation is the pflag annotation that names a flag's environment
// variable.
const envAnnotation = "tinyctl.io/env"

// BindEnv makes the flag name of fs read the environment variable env when
// the flag is not given (see ApplyEnv), else the first of also that is set
// (the nats CLI's own variables, for instance), and mentions them in its
// help text. It panics if fs has no such flag, which is a programming
// error.
func BindEnv(fs *pflag.FlagSet, name, env string, also ...string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("cli: BindEnv: no flag --" + name)
	}
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[envAnnotation] = append([]string{env}, also...)
	f.Usage += " [$" + strings.Join(f.Annotations[envAnnotation], ", $") + "]"
}

// BindAllEnv binds every flag of fs that has no variable yet to prefix
// followed by its name in upper case, dashes as underscores (--lease-ttl:
// TINYCTL_LEASE_TTL for prefix TINYCTL_).
func BindAllEnv(fs *pflag.FlagSet, prefix string) {
	fs.VisitAll(func(f *pflag.Flag) {
		if EnvOf(f) == "" && f.Name != "help" {
			BindEnv(fs, f.Name, prefix+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")))
		}
	})
}

// EnvOf returns the environment variable bound to f, or "".
func EnvOf(f *pflag.Flag) string {
	if v := f.Annotations[envAnnotation]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// ApplyEnv sets every flag of fs that was not given on the command line and
// has a bound environment variable that getenv returns non-empty. Such a
// flag then counts as set (Changed), exactly as if it had been given. It
// returns an error naming the variable when its value does not parse.
func ApplyEnv(fs *pflag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed {
			return
		}
		env, v := "", ""
		for _, env = range f.Annotations[envAnnotation] {
			if v = getenv(env); v != "" {
				break
			}
		}
		if v == "" {
			return
		}
		if setErr := fs.Set(f.Name, v); setErr != nil {
			err = fmt.Errorf("environment variable %s=%q: %w", env, v, setErr)
		}
	})
	return err
}
