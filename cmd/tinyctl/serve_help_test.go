package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/internal/cli"
)

// TestServeHelpDocumentsEveryFlagWithItsEnvironmentVariable checks what an
// SRE reads: every flag of `tinyctl serve`, its own and the inherited
// connection flags, shows its TINYCTL_* variable, and every flag that has a
// default shows it.
func TestServeHelpDocumentsEveryFlagWithItsEnvironmentVariable(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--help"}, &out, &errOut); code != exitOK {
		t.Fatalf("serve --help exited %d: %s", code, errOut.String())
	}
	help := out.String()
	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	serve, _, err := root.Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(f *pflag.Flag) {
		if f.Name == "help" {
			return
		}
		env := cli.EnvOf(f)
		switch {
		case env == "":
			t.Errorf("--%s has no environment variable", f.Name)
		case !strings.HasPrefix(env, "TINYCTL_"):
			t.Errorf("--%s reads %s, want a TINYCTL_ variable", f.Name, env)
		case !strings.Contains(help, "--"+f.Name) || !strings.Contains(help, "[$"+env+"]") && !strings.Contains(help, "[$"+env+", $"):
			t.Errorf("serve --help does not show --%s with [$%s]", f.Name, env)
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "[]" {
			if line := helpLine(help, f.Name); !strings.Contains(line, "(default ") {
				t.Errorf("--%s has default %q but its help line shows none: %q", f.Name, def, line)
			}
		}
	}
	serve.LocalFlags().VisitAll(check)
	serve.InheritedFlags().VisitAll(check)
}

// helpLine returns the line of help that documents --name.
func helpLine(help, name string) string {
	for _, l := range strings.Split(help, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--"+name+" ") || strings.Contains(l, ", --"+name+" ") {
			return l
		}
	}
	return ""
}

// TestServeRefusesBadNetworkSettingsAtStart: a mistyped cluster range
// stops `tinyctl serve` before it connects anywhere, naming the flag's
// setting, instead of failing every component later.
func TestServeRefusesBadNetworkSettingsAtStart(t *testing.T) {
	u := newUser(t)
	r := u.run("serve", "--pod-cidrs", "10.244.0.0/16,10.96.0.1/12", "--dns-node-local-ip", "169.254.20")
	expect(t, r, exitError, nil, []string{
		`cluster network podCIDRs[1] "10.96.0.1/12": not canonical: write 10.96.0.0/12`,
		`cluster dns nodeLocalIP "169.254.20": invalid IP address`,
	})
}
